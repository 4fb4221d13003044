"""Terminal views of a machine's ceilings (rich tables): measured beside theoretical, and the GPU
specs roofline knows. Values in SI units, printed with :func:`roofline.units.format_si`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.table import Table

from roofline.machine.model import COMPUTE_KEYS, MEMORY_LEVELS, Machine, compute_unit, level_order
from roofline.machine.amd_specs import AmdSpec
from roofline.machine.specs import GpuSpec
from roofline.units import format_si


def _unit(key: str) -> str:
    if key in MEMORY_LEVELS or key not in COMPUTE_KEYS and not key.startswith(("fp", "bf", "tensor")):
        return "B/s"
    return compute_unit(key)


def ceilings_table(measured: Machine | None, theory: Machine | None,
                   clock_hz: Mapping[str, float] | None = None) -> Table:
    """A rich Table: each ceiling measured (with spread and clock, ``clock_hz`` per ceiling in Hz),
    theoretical, and their ratio."""
    clock_hz = clock_hz or {}
    table = Table(title=None, header_style="bold")
    table.add_column("ceiling")
    if measured is not None:
        table.add_column("measured", justify="right")
        table.add_column("spread", justify="right")
        table.add_column("clock", justify="right")
    if theory is not None:
        table.add_column("theoretical", justify="right")
        table.add_column("clock assumed", justify="right")
    if measured is not None and theory is not None:
        table.add_column("measured / theoretical", justify="right")
    machines = [m for m in (measured, theory) if m is not None]
    mem = level_order(sorted({k for m in machines for k in m.memory}))
    comp_keys = {k for m in machines for k in m.compute}
    comp = [k for k in COMPUTE_KEYS if k in comp_keys] + sorted(comp_keys - set(COMPUTE_KEYS))
    assumed = dict(theory.metadata.get("clock_hz", {})) if theory is not None else {}
    for key in mem + comp:
        unit = _unit(key)
        group = "memory" if key in mem else "compute"
        row = [key]
        m_val = (measured.memory if group == "memory" else measured.compute).get(key) if measured else None
        t_val = (theory.memory if group == "memory" else theory.compute).get(key) if theory else None
        if measured is not None:
            spread = measured.spread.get(key)
            row += [format_si(m_val, unit),
                    "-" if spread is None or m_val is None else f"±{100 * spread:.1f}%",
                    format_si(clock_hz.get(key), "Hz") if m_val is not None else "-"]
        if theory is not None:
            clock = assumed.get(key)
            floor = "≥ " if theory.metadata.get("floor") and t_val else ""  # a floor: the CPU may run faster
            row += [floor + format_si(t_val, unit),
                    format_si(clock, "Hz") if clock else ("memory clock" if key == "dram" and t_val else "-")]
        if measured is not None and theory is not None:
            row.append(f"{m_val / t_val:.1%}" if m_val and t_val else "-")
        table.add_row(*row)
    return table


def specs_table(specs: Iterable[tuple[str, GpuSpec | AmdSpec, Machine]]) -> Table:
    """A rich Table of GPU specs: (name for ``--spec``, the spec, its theoretical ceilings) each. An AMD
    row counts CUs where an NVIDIA row counts SMs (the column says 'SMs' and the AMD cell '304 CUs'), its
    clock is the peak engine clock, and '-' marks a ceiling its sources do not give."""
    table = Table(header_style="bold")
    for col in ("spec", "GPU", "architecture", "SMs", "boost clock", "DRAM", "FP32", "dense BF16/FP16 tensor"):
        table.add_column(col)
    for key, s, m in specs:
        tensor = m.compute.get("tensor_bf16", m.compute.get("tensor_fp16"))
        if isinstance(s, AmdSpec):
            units, clock = f"{s.cus} CUs", s.peak_clock_hz
        else:
            units, clock = str(s.sms), s.boost_clock_hz
        table.add_row(key, s.name, s.architecture.name, units, format_si(clock, "Hz"),
                      format_si(m.memory.get("dram"), "B/s"), format_si(m.compute.get("fp32"), "FLOP/s"),
                      format_si(tensor, "FLOP/s"))
    return table
