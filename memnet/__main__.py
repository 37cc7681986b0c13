"""``python -m memnet`` runs the CLI."""

from .faces.cli import main

raise SystemExit(main())
