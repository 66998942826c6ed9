"""`python -m engine.cli ARGS`: the same as `tacgrid ARGS`."""

import sys

from engine.cli import main

sys.exit(main())
