"""The interval over time of a learning run, as a PNG, from ``rlopt learn --json`` output.

    rlopt learn census.csv census_rs10.csv --family sb --time-limit 600 --json > sb.json
    python experiments/plot_interval.py sb.json experiments/results/interval_sb.png

The plot is the risk report's (:func:`rlopt.report.plots.interval_chart`).
"""

from __future__ import annotations

import argparse
import base64
import json
from pathlib import Path

from rlopt.report.plots import interval_chart


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("result", type=Path, help="the JSON rlopt learn --json printed")
    parser.add_argument("png", type=Path)
    args = parser.parse_args()
    result = json.loads(args.result.read_text())
    title = (
        f"{result['family']}: [{result['n_correct_verified']}, {result['bound']}] of "
        f"{result['n_records']} after {result['seconds']['total']:.0f} s"
    )
    uri = interval_chart(result["history"], end=result["seconds"]["total"], title=title)
    args.png.write_bytes(base64.b64decode(uri.split(",", 1)[1]))
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
