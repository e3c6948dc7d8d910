"""`python -m app.cli ...`: the `llmbench` command without the installed script."""

import sys

from . import main

sys.exit(main())
