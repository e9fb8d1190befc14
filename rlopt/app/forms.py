"""The assess and map forms of ``rlopt serve``: their defaults, read from the commands
they run (``rlopt risk``, ``rlopt compare``), and their fields checked as those
commands check them, before a run is queued. A refused form is said at once, naming the
value and what was expected, and drawn again with what was given (``asked``: the
fields as text), never replaced by a default."""

from __future__ import annotations

import functools
import inspect
import itertools
import math

from rlopt.exceptions import InputError

__all__ = ["asked_map", "asked_risk", "command_defaults", "map_options", "risk_families", "risk_options"]


@functools.cache
def command_defaults() -> dict[str, dict]:
    """What ``rlopt risk`` and ``rlopt compare`` take when an option is not given, read
    from the commands themselves (their signatures, and :data:`rlopt.risk.assess.DEFAULT_FAMILIES`
    for ``rlopt risk --families``)."""
    from rlopt.cli.release import compare
    from rlopt.cli.risk import risk
    from rlopt.masking.grammar import parse_names
    from rlopt.risk.assess import DEFAULT_FAMILIES

    def defaults(command, names: tuple[str, ...]) -> dict:
        parameters = inspect.signature(command).parameters
        return {name: parameters[name].default for name in names}

    on_risk = defaults(risk, ("time_limit", "folds", "seed"))
    on_map = defaults(compare, ("families", "time_limit", "loss", "jobs", "seed"))
    return {
        "risk": {**on_risk, "families": list(DEFAULT_FAMILIES)},
        "map": {**on_map, "families": parse_names(on_map["families"])},
    }


def risk_families(n_attributes: int) -> list[str]:
    """The families ``rlopt risk`` learns on a file of ``n_attributes`` when
    ``--families`` is not given (:func:`rlopt.risk.assess.default_families`)."""
    from rlopt.risk.assess import default_families

    return default_families(n_attributes)


def asked_risk(values) -> dict:
    """The assess form's fields as given (text; the families as a list); a field not
    sent at all is the command's default, as an option not given is."""
    asked = _asked(
        values,
        command_defaults()["risk"],
        ("time_limit", "folds", "threshold", "attack_method", "attack_parameters"),
    )
    return {**asked, "drivers": "on" if values.get("drivers") else ""}  # a box not ticked is not sent


def asked_map(values) -> dict:
    """The map form's fields as given (text; the families as a list); a field not sent
    at all is the command's default."""
    return _asked(
        values, command_defaults()["map"], ("source", "methods", "time_limit", "loss", "jobs", "seed")
    )


def _asked(values, defaults: dict, fields: tuple[str, ...]) -> dict:
    asked: dict[str, str | list[str]] = {"families": [str(f) for f in values.getlist("families")]}
    for name in fields:
        value = values.get(name)
        if value is None:
            value = defaults.get(name, "")
            value = f"{value:g}" if isinstance(value, float) else value
        asked[name] = str(value).strip()
    return asked


def risk_options(asked: dict, n_records: int) -> dict:
    """The options of :class:`~rlopt.app.runs.RunSpec` from the assess form, checked for
    a pair of ``n_records`` records: the families, the time limit, the folds, the
    threshold and the published masking of the transparency attack (parsed as ``rlopt
    risk`` parses them)."""
    from rlopt.app.prepare import masking_parameters
    from rlopt.cli._masking import ATTACKED
    from rlopt.masking.grammar import spec_from_text
    from rlopt.risk.threshold import Threshold

    threshold = asked.get("threshold") or None
    if threshold is not None:
        Threshold.parse(threshold).records(n_records)  # as rlopt risk reads it, on this pair

    folds = _number(asked["folds"], "generalisation folds", int, "a whole number: 0 (none) or at least 2")
    if folds == 1 or folds < 0:
        raise InputError(f"generalisation folds {folds}; expected 0 (none) or at least 2")
    if folds > n_records:
        raise InputError(
            f"generalisation folds {folds} for {n_records} records; expected at most {n_records}"
        )
    method = asked["attack_method"] or None
    parameters = masking_parameters(asked["attack_parameters"])
    if parameters and method is None:
        raise InputError(
            f"published parameters {asked['attack_parameters']!r} without a published method; "
            "choose the method, or leave its parameters empty"
        )
    if method is not None:
        from rlopt.attacks import attack_for

        attack_for(method)  # a method with a transparency attack
        stray = sorted(set(parameters) - set(ATTACKED))
        if stray:
            raise InputError(
                f"published parameter {stray[0]!r}; expected parameters the attack reads: {', '.join(ATTACKED)}"
            )
        spec_from_text(method, parameters).check(n_records)  # the values, as rlopt risk reads them
    return {
        "families": _families(asked["families"]),
        "time_limit": _time_limit(asked["time_limit"]),
        "folds": folds,
        "attack_method": method,
        "attack_params": parameters,
        "drivers": bool(asked.get("drivers")),
        "threshold": threshold,
    }


def map_options(asked: dict, n_records: int) -> dict:
    """The options of :class:`~rlopt.app.runs.CompareSpec` from the map form, checked
    for a file of ``n_records`` records: every method and parameter value of the grid
    parsed and checked as ``rlopt compare`` checks them before its first cell."""
    from rlopt.experiments.compare import LOSSES, MAX_CELLS
    from rlopt.masking.grammar import parse_methods
    from rlopt.masking.methods import MASKING_METHODS, masking_spec

    if not asked["methods"]:
        raise InputError("no methods for the map; expected e.g. 'mdav:k=3..7:2; rank_swap:p=5|15'")
    seed = _number(asked["seed"], "masking seed", int, "a whole number")
    cells = 0
    for method, grid in parse_methods(asked["methods"]):
        seeded = {"seed": seed} if "seed" in MASKING_METHODS[method].spec.model_fields else {}
        for values in itertools.product(*grid.values()):
            masking_spec(method, **dict(zip(grid, values, strict=True)), **seeded).check(n_records)
            cells += 1
    if cells > MAX_CELLS:
        raise InputError(f"{cells} cells in the map; expected at most {MAX_CELLS}")
    if asked["loss"] not in LOSSES:
        raise InputError(f"information loss {asked['loss']!r}; expected one of {', '.join(LOSSES)}")
    jobs = _number(asked["jobs"], "worker processes", int, "a whole number of at least 1")
    if jobs < 1:
        raise InputError(f"worker processes {jobs}; expected at least 1")
    return {
        "methods": asked["methods"],
        "families": _families(asked["families"]),
        "time_limit": _time_limit(asked["time_limit"]),
        "loss": asked["loss"],
        "seed": seed,
        "jobs": jobs,
    }


def _families(names: list[str]) -> list[str]:
    """The families ticked: at least one, each a learned family."""
    from rlopt.families import LEARNED, get_learned_family

    if not names:
        raise InputError(f"no family ticked; tick at least one of {', '.join(LEARNED)}")
    for name in names:
        get_learned_family(name)
    return names


def _time_limit(text: str) -> float:
    """A time limit in seconds, checked as a solve checks it."""
    from rlopt.milp.solvers.options import SolverOptions

    seconds = _number(text, "time limit", float, "a number of seconds > 0")
    try:
        SolverOptions(time_limit=seconds)
    except InputError:
        raise InputError(f"time limit {text!r}; expected a number of seconds > 0") from None
    return seconds


def _number(text: str, what: str, kind: type, expected: str):
    """``text`` as an ``int`` or a ``float`` (an InputError naming it otherwise)."""
    try:
        value = kind(text)
    except ValueError:
        raise InputError(f"{what} {text!r}; expected {expected}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{what} {text!r}; expected {expected}")
    return value
