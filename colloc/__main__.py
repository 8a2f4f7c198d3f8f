"""``python -m colloc`` runs the ``colloc`` command."""
import sys

from .cli import main

sys.exit(main())
