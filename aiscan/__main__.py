"""`python -m aiscan` runs the command line."""

import sys

from aiscan.cli import main

sys.exit(main())
