"""The screening LP of one record: over all of its rows (the reference) against row
generation (``_RecordLP``), side by side in one run on the same records.

    python experiments/bench_screening_lp.py [--records 300]

Files: EIA 4092x10 under MDAV k = 3 (wm) and Census 1080x13 rank-swapped with p = 10,
seed 0 (wm, sb); the records the neutral parameter does not re-identify, the first
``--records`` of them. Prints the milliseconds per record of each path, their ratio,
whether every record is decided alike (unreachable or not), and the rounds of row
generation.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from rlopt.data import CENSUS_ATTRIBUTES, EIA_ATTRIBUTES, load_census, load_eia, validate_pair
from rlopt.exceptions import DataWarning
from rlopt.families import get_family
from rlopt.masking import microaggregate, rank_swap
from rlopt.milp.formulation import linkage_rows
from rlopt.milp.reductions import screening, witnesses

MARGIN = 1e-5
CELLS = [("eia", "wm"), ("census", "wm"), ("census", "sb")]


def _files(source: str):
    if source == "eia":
        original = load_eia()[list(EIA_ATTRIBUTES)]
        return original, microaggregate(original, k=3)
    original = load_census()[list(CENSUS_ATTRIBUTES)]
    return original, rank_swap(original, p=10, seed=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=300)
    args = parser.parse_args()
    print("| file | family | records | all rows ms | row generation ms | ratio | same decisions |")
    print("|---|---|---|---|---|---|---|")
    for source, name in CELLS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DataWarning)
            za, zb = validate_pair(*_files(source)).standardised()
        family = get_family(name)
        n = za.shape[1]
        neutral = family.neutral(n)
        separation = witnesses.separation(za, zb, family.distance(neutral, witnesses.attribute_names(n)))
        todo = np.flatnonzero(separation < MARGIN + witnesses.SCREEN_TOL)[: args.records]
        rows = linkage_rows(za, zb, family, margin=MARGIN, records=todo)
        mine = [rows.record == i for i in todo]
        lp = screening.FamilyLP(family, n, za, zb, MARGIN, 1e-9, 0)
        record_lp = screening._RecordLP(lp, neutral)
        seconds, decided = [], []
        for path in (lp, record_lp):
            started = time.perf_counter()
            values = [path.best(rows.coefs[m], rows.constants[m])[0] for m in mine]
            seconds.append(time.perf_counter() - started)
            decided.append([value < MARGIN - witnesses.SCREEN_TOL for value in values])
        full, generated = (1000 * s / todo.size for s in seconds)
        print(
            f"| {source} | {name} | {todo.size} | {full:.1f} | {generated:.1f} | {full / generated:.1f}x "
            f"| {decided[0] == decided[1]} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
