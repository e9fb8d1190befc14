"""A new family is one module plus one registry entry: a toy family registered here
(and nowhere else) reaches learning, the risk assessment and its report, an
experiment grid and the tables. What a family knows of itself is said by its class:
every learned family shows its own parameter in the report, and the Shapley values of
a measure are the Choquet families'."""

import json
import subprocess
import sys

import numpy as np
import pytest
from markupsafe import escape

from rlopt import LearnedDistanceLinkage
from rlopt.experiments import ExperimentConfig, run_grid, write_tables
from rlopt.families import BASELINES, FAMILIES, Family, generic_view, learned_families
from rlopt.families.choquet import Choquet, ChoquetDistance, measure_shapley
from rlopt.families.kadditive import (
    KAdditiveChoquet,
    KAdditiveDistance,
    measure_to_mobius,
    mobius_shapley,
    mobius_to_measure,
    subsets,
)
from rlopt.families.md import Mahalanobis
from rlopt.families.wm import WeightedMean
from rlopt.report import plots
from rlopt.report.html import _params_views, render_risk_report
from rlopt.risk import assess_risk
from tests._helpers import noisy_file
from tests.experiments.test_experiments import TINY


class TwoHeavyWeights(WeightedMean):
    """The toy: a weighted mean whose first two weights are at least 0.2 each."""

    name = "toy"

    def bounds(self, n_attributes):
        low, high = super().bounds(n_attributes)
        low[:2] = 0.2
        return low, high

    def neutral(self, n_attributes):
        # 0.4 on each of the first two weights, the rest shared (all on them with two attributes)
        return (
            np.r_[0.4, 0.4, np.full(n_attributes - 2, 0.2 / (n_attributes - 2))]
            if n_attributes > 2
            else np.full(n_attributes, 0.5)
        )

    def simplex_vertices(self, n_attributes):
        return None  # not the plain simplex: no parameter-space branch and bound


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(FAMILIES, "toy", TwoHeavyWeights)
    return "toy"


def test_a_registered_family_is_learned_assessed_reported_and_tabled(toy, tmp_path):
    assert learned_families()[-1] == toy  # learned after every family it might contain
    original, masked = noisy_file(21, 40, 3, scale=(0.4, 0.8, 1.2))
    learned = LearnedDistanceLinkage(toy).fit(original, masked).result_
    wm = LearnedDistanceLinkage("wm").fit(original, masked).result_
    assert learned.status == wm.status == "optimal"
    assert learned.n_correct_verified <= wm.n_correct_verified  # a subfamily of wm

    assessment = assess_risk(original, masked, families=["wm", toy], folds=0, time_limit=30)
    rows = {row["family"]: row for row in assessment.figures["families"]}
    assert rows[toy]["n_correct"] == learned.n_correct_verified
    assert f"reid_{toy}" in assessment.records
    html = render_risk_report(assessment, tmp_path / "report.html").read_text()
    assert f"{toy}: attribute weights" in html  # its parameters are shown like any weighted mean's

    config = ExperimentConfig.model_validate({**TINY, "families": ["wm", toy], "samples": [0]})
    frame = run_grid(config, tmp_path / "grid", jobs=1, progress=False).frame
    assert set(frame["family"]) == {"wm", toy}
    write_tables(frame, tmp_path / "tables")
    assert f"| {toy} |" in (tmp_path / "tables" / "table1.md").read_text()


def test_a_registered_family_gets_its_table5_columns(toy, tmp_path):
    import pandas as pd

    from rlopt.experiments.transparency import table5_cells, table5_columns, write_table5

    assert table5_cells(["census"], p_values=[10], seeds=[0], learned=[toy])[0].learned == (toy,)
    columns = table5_columns([toy])
    assert {f"learned_{toy}", f"learned_{toy}_rsld_status"} <= set(columns)
    row = dict.fromkeys(columns, 0.0) | {"dataset": "census", "p": 10, "seed": 0, "variant": "plain"}
    row |= {f"learned_{toy}_status": "optimal", f"learned_{toy}_rsld_status": "optimal"}
    text = write_table5(pd.DataFrame([row], columns=columns), tmp_path, machine="test")
    assert f"| p | {toy} " in text


# -- every learned family shows its parameter in the report -------------------------


def _chart_as_text(labels, values, **_):
    """A chart as a text data URI naming its labels and values (instead of a PNG), so
    that what a family hands the report can be read in the page."""
    return "data:text/plain," + " ".join(f"{label}={value:.4f}" for label, value in zip(labels, values))


def _heatmap_as_text(matrix, labels, **_):
    return "data:text/plain," + " ".join(labels) + " " + " ".join(f"{v:.4f}" for row in matrix for v in row)


@pytest.fixture(scope="module")
def every_family_reported(tmp_path_factory):
    """Every registered learned family assessed on one small file (16 records, 3
    attributes) and the report rendered with its charts written as text."""
    original, masked = noisy_file(5, 16, 3)
    assessment = assess_risk(original, masked, families=list(learned_families()), folds=0, time_limit=10)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(plots, "bar_chart", _chart_as_text)
        patch.setattr(plots, "heatmap", _heatmap_as_text)
        patch.setattr(plots, "family_chart", lambda *a, **k: "data:,")
        patch.setattr(plots, "interval_chart", lambda *a, **k: "data:,")
        path = render_risk_report(assessment, tmp_path_factory.mktemp("report") / "report.html")
    return assessment, path.read_text()


def _section(html: str, label: str) -> str:
    """The part of the page under the heading ``label``, up to the next heading."""
    start = html.index(f"<h3>{escape(label)}</h3>")
    ends = [i for i in (html.find("<h3>", start + 1), html.find("<h2>", start + 1)) if i != -1]
    return html[start : min(ends)]


def _numbers(value) -> list[float]:
    """Every real number of a parameter (not its counts, such as ci_k's ``k``)."""
    if isinstance(value, dict):
        return [x for item in value.values() for x in _numbers(item)]
    if isinstance(value, list):
        return [x for item in value for x in _numbers(item)]
    return [value] if isinstance(value, float) else []


@pytest.mark.parametrize("name", learned_families())
def test_every_learned_family_shows_its_parameter_in_the_report(every_family_reported, name):
    assessment, html = every_family_reported
    family = FAMILIES[name]
    assert family.report_view.__func__ is not Family.report_view.__func__, f"{name} has no view of its own"
    params = json.loads(json.dumps(assessment.figures["params"][name]))
    columns = assessment.figures["inputs"]["columns"]
    view = family.report_view(params, columns, name=name)
    assert view.table is not None or view.chart is not None
    section = _section(html, view.label)
    numbers = _numbers(params)
    assert numbers, f"{name}: no parameter values in {params}"
    for number in numbers:  # each value, in the table or in the chart
        assert f"{number:.4f}" in section, (name, number)
    for column in columns:
        if f'"{column}"' in json.dumps(params):  # the parameter names the attribute
            assert str(escape(column)) in section, (name, column)
    if view.chart is not None:
        assert f'<img alt="{escape(view.label)}"' in section


def test_the_report_names_the_baselines_and_the_measures_shapley_values(every_family_reported):
    assessment, html = every_family_reported
    assert BASELINES == ("am", "md")
    assert "Euclidean (AM)" in html and "Mahalanobis (MD)" in html
    figures = assessment.figures
    measures = {
        name for name in learned_families() if issubclass(FAMILIES[name], (Choquet, KAdditiveChoquet))
    }
    assert set(figures["shapley"]) == measures  # ci_k's among them, from its Möbius masses
    for name in measures:
        assert figures["shapley"][name] == FAMILIES[name].shapley_values(figures["params"][name], [])
        assert sum(figures["shapley"][name].values()) == pytest.approx(1.0)
    section = _section(html, FAMILIES["ci_k"].report_view(figures["params"]["ci_k"], []).label)
    for attribute, value in figures["shapley"]["ci_k"].items():
        assert f"{attribute}={value:.4f}" in section  # the Shapley chart's bars


def test_a_parameter_without_a_view_of_its_own_is_a_table_of_its_values():
    figures = {
        "families": [],
        "inputs": {"columns": ["a", "b"]},
        "params": {"mystery": {"family": "mystery", "alpha": 0.25, "beta": [1.5, 2.5], "note": "a toy"}},
    }
    (view,) = _params_views(figures)
    assert view["label"] == "mystery: parameters" and view["image"] is None
    assert view["table"]["rows"] == [["alpha", "0.25"], ["beta[0]", "1.5"], ["beta[1]", "2.5"]]
    assert view["note"].startswith("A toy.")
    # a registered family without a view of its own: the baseline MD
    md = Mahalanobis().from_data(np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.5]]), np.zeros((3, 2)), ("a", "b"))
    shown = FAMILIES["md"].report_view(md.params(), ["a", "b"])
    assert shown == generic_view("md", md.params())
    assert [row[0] for row in shown.table.rows] == [
        "columns", "precision[0][0]", "precision[0][1]", "precision[1][0]", "precision[1][1]", "rank"
    ]  # fmt: skip


def test_the_families_import_no_plotting_or_templates():
    code = (
        "import sys, rlopt.families; print(sorted(m for m in ('matplotlib', 'jinja2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- Shapley values: the Choquet families' -------------------------------------------


def test_shapley_values_by_hand():
    # mu(a) = 0.2, mu(b) = 0.5, mu(ab) = 1: phi_a = (0.2 + 0.5) / 2, phi_b = (0.5 + 0.8) / 2
    measure = np.array([0.0, 0.2, 0.5, 1.0])  # by bitmask: {}, {a}, {b}, {a, b}
    assert measure_shapley(measure) == pytest.approx([0.35, 0.65])
    params = ChoquetDistance(measure, ("a", "b")).params()
    assert Choquet.shapley_values(params, ["a", "b"]) == pytest.approx({"a": 0.35, "b": 0.65})


# A 2-additive measure on a, b, c (positions 0, 1, 2): its Möbius masses sum to 1 and
# meet m_i + sum_{j in B} m_ij >= 0 (c: 0.1 - 0.1 = 0), so it is monotone.
MOBIUS = {(0,): 0.2, (1,): 0.3, (2,): 0.1, (0, 1): 0.3, (0, 2): -0.1, (1, 2): 0.2}


def test_k_additive_shapley_values_by_hand():
    # phi_i = sum over A containing i of m(A) / |A|:
    # a: 0.2 + 0.3/2 - 0.1/2 = 0.30;  b: 0.3 + 0.3/2 + 0.2/2 = 0.55;  c: 0.1 - 0.1/2 + 0.2/2 = 0.15.
    # Through the measure mu(a, b, c, ab, ac, bc, abc) = (0.2, 0.3, 0.1, 0.8, 0.2, 0.6, 1), with
    # weights 1/3, 1/6, 1/3 for |S| = 0, 1, 2: phi_a = 0.2/3 + ((0.8 - 0.3) + (0.2 - 0.1))/6 + (1 - 0.6)/3 = 0.30.
    expected = {"a": 0.30, "b": 0.55, "c": 0.15}
    assert mobius_shapley(MOBIUS, 3) == pytest.approx(list(expected.values()))
    masses = [MOBIUS[a] for a in subsets(3, 2)]
    params = KAdditiveDistance(np.array(masses), ("a", "b", "c"), k=2).params()
    assert KAdditiveChoquet.shapley_values(params, ["a", "b", "c"]) == pytest.approx(expected)
    mu = mobius_to_measure(MOBIUS, 3)
    np.testing.assert_allclose(mu, [0, 0.2, 0.3, 0.8, 0.1, 0.2, 0.6, 1.0], atol=1e-12)


def test_choquet_and_k_additive_shapley_values_agree():
    # the 2-additive measure above, and a random monotone measure on 4 attributes (k = n)
    rng = np.random.default_rng(3)
    n = 4
    masks = np.arange(2**n)
    sizes = np.array([int(m).bit_count() for m in masks])
    # monotone: mu(S) = the largest of random values over S's subsets, scaled to mu(V) = 1
    raw = rng.uniform(size=2**n)
    raw[0] = 0.0
    mu = np.array([max(raw[s] for s in masks if s & m == s) for m in masks])
    mu /= mu[-1]
    for measure, columns, k in (
        (mobius_to_measure(MOBIUS, 3), ("a", "b", "c"), 2),
        (mu, ("w", "x", "y", "z"), n),
    ):
        width = len(columns)
        mobius = measure_to_mobius(measure, width)
        assert np.abs(mobius[sizes[: 2**width] > k]).max(initial=0.0) < 1e-12  # k-additive
        np.testing.assert_allclose(measure_shapley(measure), mobius_shapley(mobius, width), atol=1e-12)
        masses = np.array([mobius[sum(1 << i for i in a)] for a in subsets(width, k)])
        by_measure = Choquet.shapley_values(ChoquetDistance(measure, columns).params(), columns)
        by_masses = KAdditiveChoquet.shapley_values(KAdditiveDistance(masses, columns, k=k).params(), columns)
        assert by_masses == pytest.approx(by_measure, abs=1e-12)
        assert sum(by_measure.values()) == pytest.approx(1.0)


def test_every_family_says_in_words_what_it_is():
    """The web application's forms name each family by its title beside its name."""
    from rlopt.families import FAMILIES

    titles = {name: family.title for name, family in FAMILIES.items()}
    assert all(isinstance(t, str) and t for t in titles.values()), titles
    assert len(set(titles.values())) == len(titles)  # no two alike
