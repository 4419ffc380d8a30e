"""`python -m migrate.cli`: the `zk2kraft` console script."""

from migrate.cli.app import main

raise SystemExit(main())
