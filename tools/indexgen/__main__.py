"""``python -m indexgen``: the same as the ``indexgen`` command."""

from indexgen.cli import main

raise SystemExit(main())
