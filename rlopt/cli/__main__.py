"""``python -m rlopt.cli``: the ``rlopt`` command."""

from rlopt.cli._app import main

main()
