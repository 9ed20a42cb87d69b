"""`python -m catalog` is the same as the `errcat` console script."""

from catalog.cli import main

raise SystemExit(main())
