"""Counter-free mode: estimate a roofline of a PyTorch program without hardware counters.

Times come from the PyTorch profiler (CUPTI kernel times on a GPU, operator times on
the CPU), FLOPs from ``torch.utils.flop_counter``'s formulas plus ours
(:mod:`.formulas`), bytes from tensor sizes (inputs read + outputs written). Every
row is marked ``estimated``.

How it gets inside the user's program: :func:`.launch.counter_free_env` puts a
generated ``sitecustomize.py`` first on ``PYTHONPATH`` and names an output folder in
``ROOFLINE_COUNTER_FREE_DIR``. Every Python process of the command (``python x.py``,
``python -m``, ``torchrun``, ``srun python`` ...) then starts a :class:`.recorder.Recorder`
at startup and writes its operators to that folder at exit (:mod:`.hook`); the
``sitecustomize.py`` it shadows, if any, is still run.
"""

from roofline._lazy import attach  # noqa: E402

#: Modules reachable as attributes (``roofline.profiling.counter_free.<module>`` after ``import roofline``).
_SUBMODULES = ("collect", "formulas", "hook", "launch", "recorder")
__getattr__, __dir__ = attach(__name__, {}, _SUBMODULES, eager=())
