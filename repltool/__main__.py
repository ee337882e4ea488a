"""``python -m repltool``: the same as the ``repltool`` command."""

from .cli import main

main()
