"""``python -m rlopt``: the ``rlopt`` command."""

from rlopt.cli._app import main

main()
