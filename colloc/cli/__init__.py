"""The ``colloc`` command: argument parsing and dispatch (``colloc.cli.commands``)."""
from .commands import main

__all__ = ["main"]
