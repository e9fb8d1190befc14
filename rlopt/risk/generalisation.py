"""How a learned distance generalises: k-fold, learned on the other folds' records and
linked on the held-out ones (``rlopt risk --folds``)."""

from __future__ import annotations

import warnings

import numpy as np

from rlopt.data import LinkageData
from rlopt.exceptions import SolverError
from rlopt.families import get_learned_family
from rlopt.learn import learn
from rlopt.linkage import link_records
from rlopt.milp import SolverOptions
from rlopt.milp.reductions import Reductions
from rlopt.status import Status

__all__ = ["k_fold_generalisation"]


def k_fold_generalisation(
    data: LinkageData, family: str, *, folds: int, seed: int, margin: float, options: SolverOptions
) -> dict:
    """k-fold: learn on the other folds' records, link each held-out masked record
    against the whole original file; both files encoded as a whole (``data.part``). A
    fold whose solve fails is said in its entry and its records are not assessed; the
    rate is over the assessed records."""
    order = np.random.default_rng(seed).permutation(data.n_records)
    held = np.zeros(data.n_records, dtype=bool)
    assessed = np.zeros(data.n_records, dtype=bool)
    per_fold: list[dict] = []
    for k, test in enumerate(np.array_split(order, folds)):
        train = np.setdiff1d(order, test)
        fold = {"fold": k, "n_train": len(train), "n_test": len(test)}
        figures, correct = _fold(data, family, train, test, margin=margin, options=options)
        per_fold.append(fold | figures)
        if correct is not None:
            held[test] = correct
            assessed[test] = True
    return {
        "family": family,
        "folds": folds,
        "seed": seed,
        "rate": float(held[assessed].mean()) if assessed.any() else None,
        "n_correct": int(held.sum()),
        "n_assessed": int(assessed.sum()),
        "per_fold": per_fold,
    }


def _fold(
    data: LinkageData,
    family: str,
    train: np.ndarray,
    test: np.ndarray,
    *,
    margin: float,
    options: SolverOptions,
) -> tuple[dict, np.ndarray | None]:
    """One fold: learned on ``train``, the held-out records of ``test`` linked against
    the whole original file. Its figures, and which held-out records the learned
    distance re-identifies (``None`` when the solve failed: the fold says why)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        # a fold needs a verified parameter, not a proof: a recount that contradicts the
        # solver's bound is said in the fold's note instead of stopping the assessment
        try:
            result, distance = learn(
                data.part(train),
                get_learned_family(family),
                margin=margin,
                options=options,
                reductions=Reductions(),
                on_mismatch="warn",
            )
        except SolverError as exc:  # the other folds' work stays
            return {
                "train_rate": None,
                "train_status": Status.FAILED,
                "test_rate": None,
                "note": str(exc),
            }, None
    mismatches = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    for w in caught:  # the others as they were
        if not issubclass(w.category, RuntimeWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    za, zb = data.encoded.za, data.encoded.zb
    # the held-out originals first, so that row r's own original is column r
    correct = (
        np.zeros(len(test), dtype=bool)
        if distance is None
        else link_records(za[test], zb[np.concatenate([test, train])], distance).correct
    )
    figures = {"train_rate": result.rate, "train_status": result.status, "test_rate": float(correct.mean())}
    return figures | ({"note": "; ".join(mismatches)} if mismatches else {}), correct
