"""Static CSS and JavaScript of the HTML report (no framework, no external resources).

The script reads the kernel rows from a ``<script type="application/json">`` block
and builds the table with ``textContent`` only (names are never parsed as HTML). It
sorts on a header click (numbers by value, unknowns last) and filters by text, phase
and limiter.
"""

CSS = """
:root { --fg:#1d232b; --muted:#5b6573; --line:#d9dee5; --bg:#ffffff; --panel:#f5f7fa; --accent:#1f6feb;
        --hi:#b42318; --med:#b54708; --ok:#067647; }
* { box-sizing: border-box; }
body { margin:0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--fg); background: var(--bg); }
main { max-width: 1280px; margin: 0 auto; padding: 20px 28px 60px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
.sub { color: var(--muted); margin: 0 0 14px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(190px, 1fr)); gap: 10px; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
.card .k { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.card .v { font-size: 20px; font-weight: 600; margin-top: 2px; }
.cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 18px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.bar { background: var(--panel); border-radius: 3px; height: 10px; min-width: 80px; position: relative; }
.bar > span { position: absolute; left: 0; top: 0; bottom: 0; background: var(--accent); border-radius: 3px; }
.name { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px;
        overflow-wrap: anywhere; }
#kernels thead th { position: sticky; top: 0; background: var(--bg); z-index: 1; }
#kernels th button { all: unset; cursor: pointer; font-weight: 600; }
#kernels th[aria-sort="ascending"] button::after { content: " \\25B2"; font-size: 10px; }
#kernels th[aria-sort="descending"] button::after { content: " \\25BC"; font-size: 10px; }
#kernels tbody tr:hover { background: var(--panel); }
.controls { display: flex; gap: 10px; flex-wrap: wrap; align-items: center; margin-bottom: 8px; }
.controls input, .controls select { font: inherit; padding: 4px 8px; border: 1px solid var(--line); border-radius: 4px; }
.controls input { min-width: 280px; }
#shown { color: var(--muted); }
.pill { display: inline-block; padding: 0 7px; border-radius: 10px; font-size: 12px; background: var(--panel);
        border: 1px solid var(--line); white-space: nowrap; }
details { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; padding: 0 12px; }
details[open] { padding-bottom: 10px; }
summary { cursor: pointer; padding: 8px 0; }
summary .name { font-weight: 600; }
.advice { margin: 6px 0 10px; }
.status-fired { color: var(--med); font-weight: 600; }
.status-fired.sev-high { color: var(--hi); }
.status-ok { color: var(--ok); }
.status-missing { color: var(--muted); }
td.why { font-size: 13px; }
#advice td.name { min-width: 260px; }
#kernels td.name { min-width: 160px; }
#kernels th, #kernels td { padding: 4px 5px; }
#kernels th.num { white-space: normal; }
#undrawn td.name { min-width: 180px; }
.src { color: var(--muted); font-size: 12px; }
.notes { color: var(--muted); }
.chart { border: 1px solid var(--line); border-radius: 6px; }
.tree { --cols: minmax(0, 1fr) 64px 72px 56px 88px 80px 88px 80px; margin-bottom: 12px; }
.tree.with-ratio { --cols: minmax(0, 1fr) 64px 72px 56px 88px 80px 88px 80px 88px; }
.tree .tr { display: grid; grid-template-columns: var(--cols); gap: 0 8px; padding: 3px 4px;
            border-bottom: 1px solid var(--line); align-items: baseline; }
.tree .tr.head { font-weight: 600; position: sticky; top: 0; background: var(--bg); z-index: 1; }
.tree .tr.head .num { white-space: normal; }
.tree .num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.tree details { border: 0; border-radius: 0; margin: 0; padding: 0; }
.tree details[open] { padding-bottom: 0; }
.tree summary { list-style: none; padding: 3px 4px; }
.tree summary::-webkit-details-marker { display: none; }
.tree summary:hover, .tree .leaf:hover { background: var(--panel); }
.tree summary .tn::before { content: "\\25B8"; display: inline-block; width: 1.1em; color: var(--muted); }
.tree details[open] > summary .tn::before { content: "\\25BE"; }
.tree .leaf .tn::before { content: ""; display: inline-block; width: 1.1em; }
.tree .tn { font-size: 12.5px; }
.tree .parent { color: var(--muted); }
.tree .kind { color: var(--muted); font-size: 11px; font-family: system-ui, sans-serif; }
"""

JS = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("kernel-data").textContent);
  var rows = data.rows, columns = data.columns;
  var tbody = document.querySelector("#kernels tbody");
  var filterText = document.getElementById("filter-text");
  var filterPhase = document.getElementById("filter-phase");
  var filterLimiter = document.getElementById("filter-limiter");
  var shown = document.getElementById("shown");
  var sortKey = "savable_time_s", sortDir = -1;

  function fillSelect(select, key) {
    var seen = {};
    rows.forEach(function (r) { if (r[key] !== null && r[key] !== "") { seen[r[key]] = true; } });
    Object.keys(seen).sort().forEach(function (v) {
      var o = document.createElement("option");
      o.value = v; o.textContent = v; select.appendChild(o);
    });
    if (Object.keys(seen).length === 0) { select.disabled = true; }
  }

  function cmp(a, b) {
    var x = a[sortKey], y = b[sortKey];
    var xn = (x === null || x === undefined), yn = (y === null || y === undefined);
    if (xn && yn) { return a.rank - b.rank; }
    if (xn) { return 1; }
    if (yn) { return -1; }
    if (typeof x === "number" && typeof y === "number") { return sortDir * (x - y) || a.rank - b.rank; }
    return sortDir * String(x).localeCompare(String(y)) || a.rank - b.rank;
  }

  function render() {
    var text = filterText.value.toLowerCase();
    var phase = filterPhase.value, limiter = filterLimiter.value;
    var list = rows.filter(function (r) {
      if (text && r.kernel_name.toLowerCase().indexOf(text) < 0) { return false; }
      if (phase && r.phase !== phase) { return false; }
      if (limiter && r.limiter !== limiter) { return false; }
      return true;
    });
    list.sort(cmp);
    var frag = document.createDocumentFragment();
    list.forEach(function (r) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-row", String(r.id));
      columns.forEach(function (c) {
        var td = document.createElement("td");
        if (c.num) { td.className = "num"; }
        if (c.key === "kernel_name") {
          td.className = "name";
          var a = document.createElement("a");
          a.href = "#k-" + r.id;
          a.textContent = r.display_name;
          a.title = r.kernel_name;
          td.appendChild(a);
        } else {
          var shownValue = r[c.key + "__text"];
          td.textContent = (shownValue !== undefined) ? shownValue : (r[c.key] === null ? "-" : String(r[c.key]));
        }
        tr.appendChild(td);
      });
      frag.appendChild(tr);
    });
    tbody.textContent = "";
    tbody.appendChild(frag);
    shown.textContent = list.length + " of " + rows.length + " kernels";
  }

  document.querySelectorAll("#kernels th[data-key]").forEach(function (th) {
    th.querySelector("button").addEventListener("click", function () {
      var key = th.getAttribute("data-key");
      if (key === sortKey) { sortDir = -sortDir; } else { sortKey = key; sortDir = th.classList.contains("num") ? -1 : 1; }
      document.querySelectorAll("#kernels th[data-key]").forEach(function (o) { o.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
      render();
    });
  });
  [filterText, filterPhase, filterLimiter].forEach(function (el) { el.addEventListener("input", render); });
  fillSelect(filterPhase, "phase");
  fillSelect(filterLimiter, "limiter");
  var first = document.querySelector('#kernels th[data-key="' + sortKey + '"]');
  if (first) { first.setAttribute("aria-sort", "descending"); }
  render();

  document.querySelectorAll("script[data-figure]").forEach(function (node) {
    var fig = JSON.parse(node.textContent);
    var div = document.getElementById(node.getAttribute("data-figure"));
    if (window.Plotly && div) {
      window.Plotly.newPlot(div, fig.data || [], fig.layout || {}, {displaylogo: false, responsive: true});
    }
  });
})();
"""
