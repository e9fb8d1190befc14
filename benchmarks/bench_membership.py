"""The worst-case membership attack on fully synthetic releases beside the fixed
Euclidean DCR attack other tools report, per generator, on two bundled files.

    python -m benchmarks.bench_membership --seconds 20
    python -m benchmarks.bench_membership --files census --records 2000 --generators fresh,copy,copula --seconds 20
    python -m benchmarks.bench_membership --files census --generators copy --seconds 5

Each cell draws ``--records`` records of the bundled file (seed 0) on ``--columns``
attributes, holds out 30 % of them (seed 0), gives the rest to the generator (seed 0)
and runs :func:`rlopt.risk.membership.membership_risk` with wm and owa, ``--seconds``
per family. Generators: the Gaussian copula, the DP histogram at epsilon 1 and 10 (4
bins per attribute, the published domain the file's range), a "generator" that copies
its training file (the known answer 1), and "fresh": records of the same file outside
the sample, the ideal generator (what an attack chosen on the split finds by chance).
Each cell gives the in-sample worst case, the out-of-sample advantage (``--folds``) with
its 95 % interval, and the permutation null (``--permutations`` relabelled runs, on
``--jobs`` workers): its mean, 95 % quantile, the p-value, the excess and the excess
that relabelling alone gives. Prints the table and appends one row per cell to
``benchmarks/results/bench_membership.csv``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd

from benchmarks._common import record

COLUMNS = {"census": "AFNLWGT,AGI,EMCONTRB", "eia": "RESREVENUE,RESSALES,COMREVENUE"}
GENERATORS = {
    "copula": ("synthetic_copula", {}),
    "dp-hist-eps1": ("dp_histogram", {"epsilon": 1.0}),
    "dp-hist-eps10": ("dp_histogram", {"epsilon": 10.0}),
    "copy": ("copy", {}),
    "fresh": ("fresh", {}),
}


class _Copy:
    """The generator that releases its training file: every member is in the release."""

    def apply(self, frame: pd.DataFrame, columns=None) -> pd.DataFrame:
        return frame.copy()


class _Fresh:
    """The ideal generator: as many records of the same population, none of them a
    member or held out (records of the bundled file outside the sample): what an
    attack chosen on this split finds when the release favours no one."""

    def __init__(self, others: pd.DataFrame):
        self.others = others

    def apply(self, frame: pd.DataFrame, columns=None) -> pd.DataFrame:
        return self.others.sample(len(frame), random_state=0).reset_index(drop=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="census,eia")
    parser.add_argument("--generators", default=",".join(GENERATORS))
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--families", default="wm,owa")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--permutations", type=int, default=19)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()

    from rlopt.data._bundled import BUNDLED_FILES
    from rlopt.exceptions import DataWarning
    from rlopt.masking import masking_spec
    from rlopt.risk.membership import membership_risk, split_release

    rows = []
    for file in args.files.split(","):
        columns = COLUMNS[file].split(",")
        whole = BUNDLED_FILES[file].load()[columns]
        drawn = np.sort(np.random.default_rng(0).choice(len(whole), args.records, replace=False))
        frame = whole.iloc[drawn].reset_index(drop=True)  # as rlopt.masking.sample_records draws
        rest = whole.drop(whole.index[drawn]).reset_index(drop=True)
        for name in args.generators.split(","):
            method, parameters = GENERATORS[name]
            spec: Any
            if method == "copy":
                spec = _Copy()
            elif method == "fresh":
                spec = _Fresh(rest)
            else:
                spec = masking_spec(method, seed=0, **parameters)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DataWarning)  # the DP domain is the file's range
                members, holdout, synthetic = split_release(frame, spec, holdout_share=0.3, seed=0)
            t0 = time.perf_counter()
            result = membership_risk(
                members,
                holdout,
                synthetic,
                families=args.families.split(","),
                time_limit=args.seconds,
                folds=args.folds,
                permutations=args.permutations,
                anchors=False,
                jobs=args.jobs,
            )  # fmt: skip (the copy and fresh generators are the anchors)
            crossed, null = result.out_of_sample, result.null
            figures = {
                "file": f"{file} {args.records}x{len(columns)}",
                "time_limit": args.seconds,
                "generator": name,
                "fixed_dcr": round(result.fixed.advantage, 3),
                "dcr_share": round(result.dcr_share, 3),
                "fixed_chance": round(result.chance, 3),
                "worst_lower": round(result.worst.advantage, 3),
                "worst_upper": round(result.upper, 3),
                "status": str(result.status),
                "by": result.worst.family,
                **(
                    {}
                    if crossed is None
                    else {
                        "oos": round(crossed.advantage, 3),
                        "oos_low": round(crossed.interval[0], 3),
                        "oos_high": round(crossed.interval[1], 3),
                        "oos_auc": round(crossed.auc, 3),
                        "oos_tpr_at_fpr_0.1": crossed.tpr_at_fpr["0.1"],
                    }
                ),
                **(
                    {}
                    if null is None
                    else {
                        "null_mean": round(null.mean, 3),
                        "null_q95": round(null.q95, 3),
                        "p_value": round(null.p_value, 3),
                        "excess": round(null.excess, 3),
                        "excess_band": f"{null.band[0]:.3f}..{null.band[1]:.3f}",
                    }
                ),
                **{
                    f"{f}_status": str(figure.status) + f" ({figure.source})"
                    for f, figure in result.families.items()
                },
                **{  # the region search's own seconds (the MILP then checks in the time left)
                    f"{f}_regions_s": round(figure.model["regions"]["seconds"], 1)
                    for f, figure in result.families.items()
                    if "regions" in figure.model
                },
                "seconds": round(time.perf_counter() - t0, 1),
            }
            print(figures, flush=True)
            rows.append(figures)
            record("bench_membership", figures)
            if result.interrupted:  # Ctrl-C: the row of what finished is kept, no next generator
                print(pd.DataFrame(rows).to_string(index=False))
                raise SystemExit(130)
    print(pd.DataFrame(rows).to_string(index=False))


if __name__ == "__main__":
    main()
