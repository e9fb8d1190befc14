"""The ``rlopt`` command line (typer), one module per group of commands.

- :mod:`rlopt.cli._app`: the ``rlopt`` group, the table of commands (each loaded on
  first use, so that start-up imports neither scikit-learn nor Pyomo) and :func:`main`;
- :mod:`rlopt.cli._options`: what the commands share (files, columns and kinds, time
  limit, threads, outputs, Ctrl-C endings);
- :mod:`rlopt.cli._masking`: the masking parameters as options, declared once (their
  text forms are :mod:`rlopt.masking.grammar`);
- :mod:`rlopt.cli._risk_lines`: what ``rlopt risk`` prints, and what a Ctrl-C keeps;
- commands: :mod:`~rlopt.cli.risk`, :mod:`~rlopt.cli.tradeoff`, :mod:`~rlopt.cli.link`
  (link, attack), :mod:`~rlopt.cli.learn`, :mod:`~rlopt.cli.mask` (mask, data),
  :mod:`~rlopt.cli.release` (compare, models, intersect), :mod:`~rlopt.cli.integral`
  (integral, private-model), :mod:`~rlopt.cli.membership`, :mod:`~rlopt.cli.grids` (run, reproduce, report),
  :mod:`~rlopt.cli.serve`.

Exit codes: 0 done; 1 a figure is missing (a failed family or cell, a solver error);
2 bad input (``error: ...``, naming the value); 130 Ctrl-C (what was finished is kept).

:mod:`rlopt.cli.__main__` is ``python -m rlopt.cli``.
"""

from rlopt.cli._app import app, main

__all__ = ["app", "main"]
