"""Learning the worst-case distance: the scikit-learn-style learner.

``LearnedDistanceLinkage(family="ci").fit(original, masked)`` validates and
standardises the files, then runs the MILP pipeline of :mod:`rlopt.milp.pipeline`
(:func:`learn`: searches, reductions, model, HiGHS, the recount of the learned
parameter with the family's reference evaluator, plain numpy, independent of the
coefficients the model was built from). The recount arbitrates: a disagreement with
the solver's objective is an error by default. This module keeps the estimator: its
options, ``fit``, ``link``, ``score``, saved parameters.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from numbers import Real
from pathlib import Path
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from rlopt.data import ColumnKind, KindSpec, LinkageData, validate_pair
from rlopt.data._standardise import Standardisation
from rlopt.exceptions import InputError, Interrupted, NotFittedError, RecountMismatchError, SolverError
from rlopt.families import Distance, LearnedFamily, get_learned_family
from rlopt.linkage import LinkageResult, link_records
from rlopt.linkage.distance_based import recount
from rlopt.milp import SolverOptions
from rlopt.milp.ceilings.certificate import BlockOptions, describe_lower
from rlopt.milp.pipeline import learn, verify
from rlopt.milp.reductions import Reductions, Searches, options_of
from rlopt.milp.solvers.options import SOLVER_NAMES
from rlopt.milp.solvers.scip import SOLVERS, verifying_solver
from rlopt.results import LearnResult
from rlopt.status import Status
from rlopt.validation import JOBS, MARGIN, Interval, Options, check_params

__all__ = [
    "LearnedDistanceLinkage",
    "LearnResult",
    "RecountMismatchError",
    "describe_lower",
    "learn",
    "recount",
]


class LearnedDistanceLinkage(BaseEstimator):
    """Distance-based record linkage with the distance of a family learned to
    maximise the correct re-identifications (the worst-case intruder).

    Parameters
    ----------
    family : str, default="wm"
        ``wm, wm_m, owa, ci, ci_m, ci_super, sb, sb_nc, sb_pd`` (docs/method.md §5).
    margin : float, default=1e-5
        ``eps``: every learned re-identification wins by at least this distance.
        0 counts ties as correct (upper end of the margin interval, docs/method.md §4).
    time_limit : float, default=None
        Seconds for the whole fit (reductions, build and solve; the solver gets at
        least 1 s); a run stopped by it reports an interval, never "optimal".
    rel_gap, threads, log, feasibility_tol, max_cut_rounds
        See :class:`rlopt.milp.SolverOptions`.
    family_options : dict, default=None
        E.g. ``{"delta": 1e-4}`` for metric variants, ``{"published_relaxation": True}`` for ci_m.
    big_c : "tight", "uniform" or float, default="tight"
        The per-row valid big-C; ``"uniform"``: the largest of them for every row
        (the naive model); a number: that constant (for experiments).
    reductions : "all", "none", dict or Reductions, default="all"
        The exact reductions (:class:`rlopt.milp.reductions.Reductions`):
        ``drop_redundant, drop_dominated, fix_unreachable, conflicts,
        duplicate_cliques, lazy, lazy_start, warm_start, carry_rounds``. ``"none"`` with
        ``big_c="uniform"`` is the naive model (no search either, unless ``searches``
        says). Until the next release a dict may also hold the switches of ``searches``
        (a FutureWarning).
    searches : "all", "none", dict or Searches, default=None
        The searches for a better lower end and what runs beside the solve
        (:class:`rlopt.milp.reductions.Searches`): ``nca_start, surrogate, line_search,
        greedy_add, parameter_bb, quick_solve``; none changes the model. ``None``: all,
        or none with ``reductions="none"``.
    on_mismatch : {"raise", "warn"}, default="raise"
        What to do when the recount disagrees with the solver.
    verify : bool, default=False
        Re-prove a claimed optimum with the plain model (:func:`verify`, the same time
        limit) solved by ``verify_solver``: ``result_.verification`` says which solver
        and whether it agrees; a contradiction raises :class:`~rlopt.exceptions.SolverError`.
    verify_solver : {"auto", "scip", "highs"}, default="auto"
        The solver of ``verify``: SCIP (the other solver: ``pip install "rlopt[scip]"``),
        HiGHS, or SCIP when installed, else HiGHS. ``"scip"`` without PySCIPOpt is an
        :class:`~rlopt.exceptions.InputError` before the fit.
    blocks : BlockOptions, dict or None, default=None
        Block ceilings proven beside the fit (:mod:`rlopt.milp.ceilings.blocks`): the records in
        random blocks whose MILPs, solved in worker processes (``{"jobs": 2}``) or on a
        Dask cluster (``{"scheduler": ADDRESS}``), bound the count by their sum;
        ``result_.blocks`` is the certificate. ``None``: none.
    n_jobs : int, default=1
        Worker processes racing the fit with other HiGHS seeds, telling each other their
        ceilings and parameters (:mod:`rlopt.milp.racing.race`): the first to close the interval
        ends them all; a proven optimum is the same for every ``n_jobs``. With ``blocks``
        the blocks have their own workers and the fit runs alone.

    Attributes
    ----------
    result_ : LearnResult
    distance_ : Distance
        The learned distance (on standardised records).
    params_ : dict
        The learned parameters, named by attribute.
    n_correct_ : int
        Verified number of correct re-identifications.
    columns_ : tuple of str
    masked_standardisation_, original_standardisation_ : Standardisation
        The z-score maps of the two files it was fitted on (used by :meth:`distance`).

    A scikit-learn estimator: ``clone``, ``get_params`` and ``set_params`` work,
    and every method that needs the fit raises :class:`rlopt.exceptions.NotFittedError`
    before it. ``fit`` takes the two aligned files instead of ``X, y``.

    Examples
    --------
    >>> from rlopt import build, published_recipe, LearnedDistanceLinkage
    >>> original, masked = build(published_recipe("M4-33"))
    >>> LearnedDistanceLinkage("wm").fit(original, masked).result_.status  # doctest: +SKIP
    'optimal'
    """

    _parameter_constraints: ClassVar[dict] = {
        "margin": [MARGIN],
        "big_c": [Options(("tight", "uniform")), Interval(Real, 0, closed="neither")],
        "on_mismatch": [Options(("raise", "warn"))],
        "n_jobs": [JOBS],
        "verify_solver": [Options(SOLVERS)],
        **SolverOptions._parameter_constraints,
    }

    def __init__(
        self,
        family: str = "wm",
        *,
        margin: float = 1e-5,
        time_limit: float | None = None,
        rel_gap: float = 0.0,
        threads: int | None = None,
        log: bool = False,
        feasibility_tol: float = 1e-9,
        max_cut_rounds: int = 100,
        family_options: dict | None = None,
        big_c: str | float = "tight",
        reductions: str | dict | Reductions = "all",
        searches: str | dict | Searches | None = None,
        on_mismatch: str = "raise",
        verify: bool = False,
        verify_solver: str = "auto",
        blocks: BlockOptions | dict | None = None,
        n_jobs: int = 1,
    ):
        self.family = family
        self.margin = margin
        self.time_limit = time_limit
        self.rel_gap = rel_gap
        self.threads = threads
        self.log = log
        self.feasibility_tol = feasibility_tol
        self.max_cut_rounds = max_cut_rounds
        self.family_options = family_options
        self.big_c = big_c
        self.reductions = reductions
        self.searches = searches
        self.on_mismatch = on_mismatch
        self.verify = verify
        self.verify_solver = verify_solver
        self.blocks = blocks
        self.n_jobs = n_jobs

    def _family(self) -> LearnedFamily:
        return get_learned_family(self.family, **(self.family_options or {}))

    def fit(
        self,
        original,
        masked=None,
        *,
        columns: Sequence[str] | None = None,
        id_column: str | None = None,
        drop_nonfinite: bool = False,
        kinds: KindSpec | dict | None = None,
        export: str | Path | None = None,
        known: Sequence[tuple[str, Distance]] = (),
        progress: Callable[[dict], None] | None = None,
    ) -> LearnedDistanceLinkage:
        """Learn the family's best distance on an original file and its masked file (or
        on validated :class:`~rlopt.data.LinkageData` alone; ``kinds`` is then the
        declaration it was validated with, kept for :meth:`link`).

        ``known``: ``(label, distance)`` pairs already at hand (on these files'
        standardised columns), e.g. MD or a smaller family's optimum; each one the
        family contains is a start and a lower end (see :func:`learn`).
        ``progress(event)``: called whenever the run's interval narrows (see :func:`learn`)."""
        checked = self._checked()
        validated = isinstance(original, LinkageData)
        data = validate_pair(
            original,
            masked,
            columns=columns,
            id_column=id_column,
            drop_nonfinite=drop_nonfinite,
            kinds=None if validated else kinds,
        )
        return self._fit(data, checked, KindSpec.coerce(kinds), export=export, known=known, progress=progress)

    def _checked(
        self,
    ) -> tuple[LearnedFamily, tuple[Reductions, Searches], SolverOptions, BlockOptions | None]:
        """The family, reductions and searches, solver options and block options, each
        checked (before the files are read)."""
        family = self._family()
        check_params(self.get_params(deep=False), self._parameter_constraints)
        if self.verify:
            verifying_solver(self.verify_solver)  # "scip" without PySCIPOpt: an error before the fit
        options = SolverOptions(
            time_limit=self.time_limit,
            rel_gap=self.rel_gap,
            threads=self.threads,
            log=self.log,
            feasibility_tol=self.feasibility_tol,
            max_cut_rounds=self.max_cut_rounds,
        )
        return family, options_of(self.reductions, self.searches), options, BlockOptions.coerce(self.blocks)

    def _fit(self, data, checked, kind_spec: KindSpec, *, export, known, progress) -> LearnedDistanceLinkage:
        family, (reductions, searches), options, blocks = checked
        settings = {
            "big_c": self.big_c,
            "reductions": reductions,
            "searches": searches,
            "on_mismatch": self.on_mismatch,
            "export": export,
        }
        if self.n_jobs > 1 and blocks is None:
            self.result_, self.distance_ = _raced(
                data, family, float(self.margin), options, self.n_jobs, known, progress, settings
            )
        else:
            self.result_, self.distance_ = learn(
                data,
                family,
                margin=float(self.margin),
                options=options,
                known=known,
                progress=progress,
                blocks=blocks,
                **settings,
            )
        if self.verify and self.result_.status == Status.OPTIMAL:
            self._verify(data, family, options)
        self.columns_ = data.columns
        self.kinds_ = data.kinds
        self.kind_spec_ = kind_spec
        self._set_standardisation(data)
        self.params_ = self.result_.params
        self.n_correct_ = self.result_.n_correct_verified
        return self

    def _verify(self, data: LinkageData, family: LearnedFamily, options: SolverOptions) -> None:
        """``result_.verification``: the claimed optimum proven again (:func:`verify`); a
        contradiction raises :class:`~rlopt.exceptions.SolverError`, reporting neither figure;
        Ctrl-C raises :class:`~rlopt.exceptions.Interrupted` with the claim as ``partial``
        (its ``verification`` the plain model's interval so far)."""
        try:
            v = verify(data, family, self.result_, options=options, solver=self.verify_solver)
        except Interrupted as exc:  # Ctrl-C: the claim, and the verification so far
            v = exc.partial
        self.result_.verification = v
        if v["agrees"] is False:
            raise SolverError(
                f"{self.family}: the claimed optimum {self.result_.n_correct_verified} is contradicted by "
                f"the plain model's interval [{v['n_correct']}, {v['bound']}] ({v['status']}) solved by "
                f"{SOLVER_NAMES[v['solver']]} {v['version']}; one of the two proofs is wrong, so neither "
                "figure is reported"
            )
        if v["status"] == Status.INTERRUPTED:
            raise Interrupted(f"{self.family}: verification interrupted", partial=self.result_)

    def _set_standardisation(self, data: LinkageData) -> None:
        self.masked_standardisation_, self.original_standardisation_ = data.encoded.maps

    def _repr_html_(self) -> str:
        """A notebook's view: once fitted, the interval and the learned distance
        (:mod:`rlopt.report.notebook`); before, scikit-learn's view of its parameters."""
        if not self.__sklearn_is_fitted__():
            return super()._repr_html_()
        from rlopt.report.notebook import estimator_html

        return estimator_html(self)

    def plot(self):
        """The fitted interval over the run (its certificate's events) as a figure."""
        from rlopt.report.notebook import estimator_figure

        return estimator_figure(self)

    def __sklearn_is_fitted__(self) -> bool:
        return getattr(self, "distance_", None) is not None

    def _fitted_distance(self) -> Distance:
        """The learned distance; :class:`NotFittedError` before ``fit``."""
        distance = getattr(self, "distance_", None)
        if distance is None:
            raise NotFittedError(
                "this LearnedDistanceLinkage has no learned distance: call fit() or "
                "load_params() first (or the solver found no parameter)"
            )
        return distance

    def distance(self, a, b) -> np.ndarray:
        """Learned distances between masked records ``a`` and original records ``b``
        (raw values, standardised with the statistics of the files it was fitted on).

        Returns
        -------
        ndarray of shape (len(a), len(b))
        """
        distance = self._fitted_distance()
        categorical = [k.name for k in getattr(self, "kinds_", ()) if k.categorical]
        if categorical:
            raise InputError(
                f"distance() reads raw numbers; attributes {categorical} are categorical. "
                "Link the files with link() instead"
            )
        if not hasattr(self, "masked_standardisation_"):
            raise NotFittedError(
                "distance() needs the standardisation of the fitted files; this "
                "parameter file predates it (save it again with save_params)"
            )
        a = np.atleast_2d(np.asarray(a, dtype=float))
        b = np.atleast_2d(np.asarray(b, dtype=float))
        za = self.masked_standardisation_.apply(a, name="a")
        zb = self.original_standardisation_.apply(b, name="b")
        return distance.pairwise(za, zb)

    def link(
        self, original, masked, *, id_column: str | None = None, drop_nonfinite: bool = False
    ) -> LinkageResult:
        """DBRL of ``masked`` against ``original`` with the learned distance (each
        file standardised on its own, on the fitted columns)."""
        distance = self._fitted_distance()
        data = validate_pair(
            original,
            masked,
            columns=list(self.columns_),
            id_column=id_column,
            drop_nonfinite=drop_nonfinite,
            kinds=getattr(self, "kind_spec_", None),
        )
        return link_records(data.encoded.za, data.encoded.zb, distance)

    def score(self, original, masked, **kwargs) -> float:
        """Share of records correctly re-identified (strictly nearest) by :meth:`link`."""
        return self.link(original, masked, **kwargs).rate

    def save_params(self, path: str | Path) -> Path:
        """Write the learned parameters (the schema of ``params_``) as JSON."""
        self._fitted_distance()
        path = Path(path)
        standardisation = {
            name: {"scale": z.scale.tolist(), "mean": z.mean.tolist(), "sd": z.sd.tolist()}
            for name, z in (
                ("masked", self.masked_standardisation_),
                ("original", self.original_standardisation_),
            )
        }
        path.write_text(
            json.dumps(
                {
                    **(self.params_ or {}),
                    "columns": list(self.columns_),
                    "kinds": [k.to_dict() for k in getattr(self, "kinds_", ())],
                    "kind_spec": getattr(self, "kind_spec_", KindSpec()).to_dict(),
                    "margin": self.margin,
                    "n_correct": self.n_correct_,
                    "standardisation": standardisation,
                },
                indent=2,
            )
        )
        return path

    @classmethod
    def load_params(cls, path: str | Path) -> LearnedDistanceLinkage:
        """A fitted learner read from a JSON file written by :meth:`save_params`
        (``result_`` is not saved; ``n_correct_`` is the count on the files it was fitted on)."""
        path = Path(path)
        if not path.is_file():
            raise InputError(f"parameter file not found: {str(path)!r}")
        try:
            params = json.loads(path.read_text())
            name, columns = params["family"], tuple(params["columns"])
        except (ValueError, KeyError, TypeError) as exc:
            detail = f"no key {exc}" if isinstance(exc, KeyError) else str(exc)
            raise InputError(
                f"{str(path)!r} is not an rlopt parameter file ({detail}); expected "
                "the JSON written by rlopt learn --params-out"
            ) from None
        learner = cls(name, margin=params.get("margin", 1e-5), family_options=params.get("options"))
        family = learner._family()
        learner.distance_ = family.distance(family.theta_from_params(params, columns), columns)
        learner.columns_ = columns
        learner.kind_spec_ = KindSpec.coerce(params.get("kind_spec"))
        learner.kinds_ = tuple(ColumnKind.from_dict(k) for k in params.get("kinds", ()))
        learner.params_ = learner.distance_.params()
        learner.n_correct_ = params.get("n_correct")
        saved = params.get("standardisation")
        if saved is not None:
            try:
                learner.masked_standardisation_, learner.original_standardisation_ = (
                    Standardisation(
                        *(np.asarray(saved[name][key], dtype=float) for key in ("scale", "mean", "sd"))
                    )
                    for name in ("masked", "original")
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise InputError(
                    f"{str(path)!r}: unreadable standardisation ({exc}); expected "
                    "the JSON written by rlopt learn --params-out"
                ) from None
        return learner


def _raced(data, family, margin, options, jobs, known, progress, settings):
    """One family learned by ``jobs`` racing runs (:func:`rlopt.milp.racing.race.race`)."""
    from rlopt.milp.racing.race import race

    (raced,) = race(
        data,
        [family],
        margin=margin,
        options=options,
        jobs=jobs,
        known=known,
        intervals=None if progress is None else lambda name, event: progress(event),
        settings=settings,
    )
    if raced.result is None:
        raise SolverError(f"{family.name}: {raced.error}")
    return raced.result, raced.distance
