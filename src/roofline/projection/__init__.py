"""Roofline projection: the kernels of a profile measured on one machine, on another machine's ceilings.

A kernel's FLOPs per precision and bytes per level, measured once, bound its time on any machine
whose ceilings we know. For each kernel (row of an analysis by name, or by phase and name):

* ``best_time_s``: its roofline time on the target, ``max(FLOPs_p / peak_p, bytes_l / BW_l)``: the
  best case, at 100% of the target's roofline;
* ``projected_time_s``: the time if it keeps the fraction of its roofline it reaches today,
  ``time_s x best_time_s / roofline_time_s`` (the default projection);
* ``low_time_s`` .. ``high_time_s``: the range. Its low end is the best case; its high end the larger
  of the projection and the time if the part of today's time above the roofline (latency, launch,
  stalls) keeps its SM cycles (``best + (time - roofline) x clock here / clock there``); then widened
  by each kernel's notes.

What the model cannot know is said, as a note on the kernel (:data:`NOTE_CODES`), and widens its
range: a limiter that changes (high end: the new limiter at today's use of it), precisions the
target lacks (held to a substitute ceiling, :data:`SUBSTITUTES`, or left unbounded), launches too
short for the roofline to matter (the range takes in today's time), L2 capacities that differ (a
working set that reuses the L2 here and may not fit the target's: its L2 bytes charged to DRAM
there, as a stated assumption; one that may newly fit: DRAM traffic may fall), and unknown FLOP
components (high end: today's time x the largest ratio of the two machines' ceilings it could use).

Both rooflines use the memory levels that both machines have ceilings for, so that the fraction of
the roofline means the same on both sides. The source machine is scaled to the kernels' clock (as in
every analysis); the target is taken at its own clock, or at ``target_clock_hz``.

Modules: :mod:`~roofline.projection.engine` (:func:`project`), :mod:`~roofline.projection.machines` (the
two machines made comparable, per-row roofline terms), :mod:`~roofline.projection.notes` (the notes and
how each widens a range), :mod:`~roofline.projection.model` (:class:`Projection`). Pure: no I/O, no
plotting; views take a :class:`Projection` (:mod:`roofline.views.projection`).
"""

from __future__ import annotations

from roofline.projection.machines import SUBSTITUTES, l2_size, profile_l2_bytes
from roofline.projection.engine import project
from roofline.projection.notes import FLOP_HINT_KEYS, L2_REUSE, NOTE_CODES, SHORT_LAUNCH_S
from roofline.projection.model import SCHEMA, TOTAL_KEYS, Projection

__all__ = ["FLOP_HINT_KEYS", "L2_REUSE", "NOTE_CODES", "SCHEMA", "SHORT_LAUNCH_S", "SUBSTITUTES", "TOTAL_KEYS",
           "Projection", "l2_size", "profile_l2_bytes", "project"]
