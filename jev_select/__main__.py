"""``python -m jev_select`` runs the ``jev-select`` command."""

from .cli import main

raise SystemExit(main())
