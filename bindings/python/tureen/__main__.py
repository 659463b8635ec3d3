"""``python -m tureen``: the inspector CLI (see tureen.cli)."""

import sys

from .cli import main

sys.exit(main())
