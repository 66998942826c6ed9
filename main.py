"""`python main.py ...` is the same program as the installed `tacgrid` command."""

import sys

from engine.cli import main

if __name__ == "__main__":
    sys.exit(main())
