"""Command-line interface: a thin layer over the Python API (only this package prints or exits)."""
