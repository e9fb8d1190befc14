"""A new family is one module plus one registry entry: a toy family registered here
(and nowhere else) reaches learning, the risk assessment and its report, an
experiment grid and the tables."""

import numpy as np
import pytest

from rlopt import LearnedDistanceLinkage
from rlopt.experiments import ExperimentConfig, run_grid, write_tables
from rlopt.families import FAMILIES, learned_families
from rlopt.families.wm import WeightedMean
from rlopt.report.html import render_risk_report
from rlopt.risk import assess_risk
from tests._helpers import noisy_file
from tests.test_experiments import TINY


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
