"""``python -m colloc`` runs the ``colloc`` command."""
import sys

from .cli.commands import main

sys.exit(main())
