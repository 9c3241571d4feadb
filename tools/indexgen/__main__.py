"""``python -m indexgen``: the same as the ``indexgen`` command."""

from indexgen.run.cli import main

raise SystemExit(main())
