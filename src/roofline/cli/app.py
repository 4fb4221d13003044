"""The `roofline` command. Each sub-command lives in its own module and registers itself here.

`main(argv) -> int` runs a command; it never raises for expected errors: a
:class:`~roofline.errors.RooflineError` or a usage error becomes one message on stderr and
exit status 2. Notes and warnings go to stderr through one :class:`~roofline.cli.console.Messages`
per run (each once; ``--quiet`` silences them); results go to stdout. The installed command is
:func:`roofline.cli.entry.run`: :func:`main`, then the process ends (:func:`end_process`).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Sequence
from importlib import import_module
from typing import TYPE_CHECKING, Any, NoReturn

import click

from roofline.cli.console import Messages, stop_writing
from roofline.cli.options import READ_AHEAD
from roofline.errors import RooflineError

if TYPE_CHECKING:
    from roofline.api import ReadAhead

#: Modules that define sub-commands; each has ``register(app: click.Group) -> None``.
COMMAND_MODULES = (
    "roofline.cli.analyze",
    "roofline.cli.compare",
    "roofline.cli.project",
    "roofline.cli.profile",
    "roofline.cli.machine",
)

EXIT_BAD_INPUT = 2


class _Commands(click.Group):
    """The commands, listed in the order they are registered (click's own order is alphabetical);
    the run's context keeps the parse started before them (``ahead``: :data:`~roofline.cli.options.READ_AHEAD`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        ahead = extra.pop("ahead", None)
        ctx = super().make_context(info_name, args, parent, **extra)
        ctx.meta[READ_AHEAD] = ahead
        return ctx


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        from roofline._version import __version__

        click.echo(__version__)
        ctx.exit(0)


def build_app() -> click.Group:
    @click.group(cls=_Commands, name="roofline", no_args_is_help=True, context_settings={"show_default": True})
    @click.option("--version", is_flag=True, is_eager=True, expose_value=False, callback=_print_version,
                  help="Print the version and exit.")
    def app() -> None:
        """Hierarchical roofline analysis of GPU and CPU programs."""

    for mod in COMMAND_MODULES:
        import_module(mod).register(app)

    @app.command()
    def version() -> None:
        """Print the version."""
        from roofline._version import __version__

        click.echo(__version__)

    return app


def error(message: str) -> None:
    """Print one error message to stderr (no traceback)."""
    sys.stderr.write(f"roofline: error: {message}\n")


#: Python modules whose package has another name on PyPI.
_PACKAGE_OF = {"cpuinfo": "py-cpuinfo", "pynvml": "nvidia-ml-py", "cupy": "cupy-cuda12x (or cupy-cuda13x)",
               "ncu_report": "ncu-report", "yaml": "pyyaml"}


def missing_package(module: str) -> str:
    """The one-line message for a Python module that is not installed."""
    top = module.split(".")[0]
    package = _PACKAGE_OF.get(top, top)
    return (f"the Python module '{top}' is not installed, and this command needs it: pip install {package} "
            "(pip install roofline installs every required one; optional ones are in its extras)")


def main(argv: Sequence[str] | None = None, *, ahead: ReadAhead | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 bad input or usage, 1 other failure). ``ahead``:
    the parse of a profile the command line names, started before (:mod:`roofline.cli.entry`)."""
    app = build_app()
    args = list(sys.argv[1:] if argv is None else argv)
    messages = Messages()
    try:
        with messages.capture():
            code = app.main(args=args, prog_name="roofline", standalone_mode=False, obj=messages, ahead=ahead)
        return code if isinstance(code, int) else 0
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except click.ClickException as exc:  # usage errors (bad option values, unknown options): one line
        if isinstance(exc, click.exceptions.NoArgsIsHelpError):  # `roofline` alone: the help, and status 2
            exc.show()
            return EXIT_BAD_INPUT
        ctx = getattr(exc, "ctx", None)
        where = f" (see {ctx.command_path} --help)" if ctx is not None else ""
        error(" ".join(exc.format_message().split()) + where)
        return int(getattr(exc, "exit_code", EXIT_BAD_INPUT))
    except click.Abort:
        error("aborted")
        return 1
    except RooflineError as exc:
        error(exc.render())
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        error("interrupted")
        return 130
    except BrokenPipeError:  # standard output's reader stopped reading (| head) before a file sent there ended
        stop_writing(sys.stdout)
        return 1
    except Exception as exc:  # a bug: one message, the traceback only on request
        if os.environ.get("ROOFLINE_DEBUG"):
            raise
        if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name.split(".")[0] != "roofline":
            error(missing_package(exc.name))  # a broken install (a package removed, PYTHONPATH=src): say which
            return 1
        error(
            f"internal error: {type(exc).__name__}: {exc}\n"
            "  This is a bug in roofline; please report it. Set ROOFLINE_DEBUG=1 to see the traceback."
        )
        return 1
    return 0


def end_process(code: int) -> NoReturn:
    """End the process with ``code`` once what Python does at exit that anyone can see is done:
    non-daemon threads joined, ``atexit`` functions run (coverage, dask, logging register theirs),
    standard output and error flushed. What is skipped is the teardown of every module and the last
    garbage collection: with pandas, pyarrow and numpy loaded they take 0.12-0.17 s, at the end of
    every command, on the 2-core VM (measured from the last line of ``main`` to the shell's next
    command: 0.15 s, against 0.015 s with this), and nothing roofline writes waits for them (its
    files are closed when written)."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_functions is None:  # not CPython: let the interpreter end the process its own way
        raise SystemExit(code)
    run_exit_functions()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader of a pipe has gone: what is left is dropped, as main() does
            stop_writing(stream)
            code = code or 1
        except (AttributeError, OSError, ValueError):  # no stream, or a closed one: nothing to flush
            pass
    os._exit(code)
