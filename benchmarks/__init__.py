"""The benchmarks that are rerun after a change: see ``benchmarks/README.md``.

Each ``bench_*.py`` runs as ``python -m benchmarks.bench_NAME`` from the repository root,
builds its files through :mod:`benchmarks._files` and appends its rows through
:mod:`benchmarks._common` to ``benchmarks/results/<name>.csv``.
"""
