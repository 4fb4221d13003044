"""`roofline analyze` and `roofline demo` (filled in by the core package work)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    @app.command()
    def version() -> None:
        """Print the version."""
        from roofline import __version__

        typer.echo(__version__)
