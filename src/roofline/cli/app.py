"""The `roofline` command. Each sub-command lives in its own module and registers itself here.

`main(argv) -> int` is the entry point; it never raises for expected errors: a
:class:`~roofline.errors.RooflineError` becomes one message on stderr and exit status 2.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from importlib import import_module

import typer

from roofline.errors import RooflineError

#: Modules that define sub-commands; each has ``register(app: typer.Typer) -> None``.
COMMAND_MODULES = (
    "roofline.cli.analyze",
    "roofline.cli.compare",
    "roofline.cli.profile",
    "roofline.cli.machine",
)

EXIT_BAD_INPUT = 2


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="roofline",
        help="Hierarchical roofline analysis of GPU and CPU programs.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    @app.callback()
    def _root() -> None:
        """Hierarchical roofline analysis of GPU and CPU programs."""

    for mod in COMMAND_MODULES:
        import_module(mod).register(app)

    @app.command()
    def version() -> None:
        """Print the version."""
        from roofline import __version__

        typer.echo(__version__)

    return app


def error(message: str) -> None:
    """Print one error message to stderr (no traceback)."""
    sys.stderr.write(f"roofline: error: {message}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0 ok, 2 bad input or usage, 1 other failure)."""
    app = build_app()
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        # Standalone mode lets typer print usage errors and --help itself; it exits through SystemExit.
        app(args=args, prog_name="roofline", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except RooflineError as exc:
        error(exc.render())
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        error("interrupted")
        return 130
    except Exception as exc:  # a bug: one message, the traceback only on request
        if os.environ.get("ROOFLINE_DEBUG"):
            raise
        error(
            f"internal error: {type(exc).__name__}: {exc}\n"
            "  This is a bug in roofline; please report it. Set ROOFLINE_DEBUG=1 to see the traceback."
        )
        return 1
    return 0
