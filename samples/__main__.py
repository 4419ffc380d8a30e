"""`python -m samples`: the sample generator's command line (`samples.cli`)."""

from samples.cli import main

raise SystemExit(main())
