"""``rlopt integral``: the update attack from files, on the worked examples of
tests/integral (exact), on a larger file (drawn modifications), and its bad input."""

import json

import numpy as np
import pandas as pd
import pytest

from tests._helpers import run_main


def _files(folder, before, after, population=()):
    for name, values in (("before", before), ("after", after), ("pop", population)):
        pd.DataFrame({"ID": [f"r{v}" for v in values], "v": list(values)}).to_csv(
            folder / f"{name}.csv", index=False
        )


MEAN_WITH_CANDIDATES = ["integral", "before.csv", "after.csv", "--id-column", "ID", "--model", "mean"]
MEAN_WITH_CANDIDATES += ["--population", "pop.csv"]


def test_the_mean_example_by_hand(tmp_path, monkeypatch, capsys):
    """X = {1, 2, 3} becomes {1, 2, 3, 4} (mean 2 to 2.5); with 5 also a candidate, M = {+r4, -r1}."""
    monkeypatch.chdir(tmp_path)
    _files(tmp_path, [1, 2, 3], [1, 2, 3, 4], [5])
    args = MEAN_WITH_CANDIDATES
    assert run_main([*args, "--max-changes", "2", "--json", "out.json"]) == 0
    figures = json.loads((tmp_path / "out.json").read_text())
    assert figures["modifications"] == ["{+r4}", "{-r1}"] and figures["k"] == 2 and figures["exact"]
    assert figures["integrally_private"] and figures["update"] == "{+r4}"
    assert "consistent modifications of at most 2 record(s): 2 (exact" in capsys.readouterr().out


def test_an_update_with_one_explanation_is_named(tmp_path, monkeypatch, capsys):
    """{1, 2} to {2} (mean 1.5 to 2) with 4 a candidate: only -r1 explains it."""
    monkeypatch.chdir(tmp_path)
    _files(tmp_path, [1, 2], [2], [4])
    args = MEAN_WITH_CANDIDATES
    assert run_main([*args, "--report", "attack.html"]) == 0
    out = capsys.readouterr().out
    page = (tmp_path / "attack.html").read_text()
    assert "Not integrally private" in page and "removes record r1." in page and "<code>{-r1}</code>" in page
    assert '<td class="text"><code>{-r1}</code></td>' in page  # the update made
    assert (
        "removed in every one: r1" in out
        and "integrally private: no: -r1 in every consistent modification" in out
    )


def test_a_larger_file_is_attacked_on_drawn_modifications(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    frame = pd.DataFrame({"ID": [f"p{i}" for i in range(40)], "x": x, "y": (x > 0).astype(int)})
    frame.iloc[:30].to_csv("before.csv", index=False)
    frame.iloc[:29].to_csv("after.csv", index=False)  # p29 removed
    frame.iloc[30:].to_csv("pop.csv", index=False)
    args = [
        "integral",
        "before.csv",
        "after.csv",
        "--id-column",
        "ID",
        "--target",
        "y",
        "--population",
        "pop.csv",
    ]
    assert run_main([*args, "--precision", "1", "--samples", "300", "--json", "out.json"]) == 0
    figures = json.loads((tmp_path / "out.json").read_text())
    assert (
        not figures["exact"] and figures["drawn"] == 40 and figures["candidates"] == 40
    )  # 40 single changes exist
    assert "{-p29}" in figures["modifications"]  # every single change drawn: the true one among them
    assert "(drawn: more modifications may be consistent" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--model", "tree"], "--model tree needs --target COLUMN"),
        (["--model", "linear", "--target", "nope"], "--target 'nope' is not a column"),
        (["--known", "after.csv"], "--known holds records that are not in BEFORE"),
        (["--id-column", "nope"], "--id-column 'nope' is not a column of BEFORE"),
        (["--jobs", "2", "--scheduler", "tcp://h:1"], "give one of the two"),
    ],
)
def test_bad_input_is_one_clear_error(tmp_path, monkeypatch, capsys, extra, message):
    monkeypatch.chdir(tmp_path)
    _files(tmp_path, [1, 2, 3], [1, 2, 3, 4])
    args = ["integral", "before.csv", "after.csv", "--model", "mean"]
    if "--id-column" not in extra:
        args += ["--id-column", "ID"]
    assert run_main([*args, *extra]) == 2
    assert message in capsys.readouterr().err


def _line_file(folder, n=60):
    """y = 2x exactly: every subsample learns the same line (and two bad test files)."""
    x = np.arange(n, dtype=float)
    frame = pd.DataFrame({"x": x, "y": 2 * x, "group": ["a", "b"] * (n // 2)})
    frame.to_csv(folder / "line.csv", index=False)
    (folder / "blank.csv").write_text("x,y,group\n1000,2000,a\n,2002,b\n")
    (folder / "words.csv").write_text("x,y,group\none,2000,a\ntwo,2002,b\n")


PRIVATE_LINE = ["private-model", "line.csv", "--model", "linear", "--target", "y", "--features", "x"]
PRIVATE_LINE += ["--subsamples", "40", "--k", "5", "--no-progress"]


def test_a_model_every_subsample_learns_is_chosen_at_no_cost(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _line_file(tmp_path)
    assert run_main([*PRIVATE_LINE, "--json", "out.json"]) == 0
    figures = json.loads((tmp_path / "out.json").read_text())
    (choice,) = figures["choices"]
    assert choice["distinct_models"] == 1 and choice["generators"] == 40 and choice["n_private_models"] == 1
    assert choice["score"] == pytest.approx(1.0) and choice["utility_lost"] == pytest.approx(0.0)
    assert choice["model"] == "y = 0 + 2 x" and figures["score"] == "R²"
    assert (figures["training_records"], figures["validation_records"], figures["test_records"]) == (42, 9, 9)
    assert figures["subsample_size"] == 21 and figures["held_out_like_training"] == 0
    assert "the chosen model: y = 0 + 2 x" in capsys.readouterr().out


def test_a_held_out_file_and_masked_data_give_a_second_choice(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _line_file(tmp_path)
    x = np.arange(100.0, 110.0)  # records the model was not learned on
    pd.DataFrame({"x": x, "y": 2 * x, "group": "c"}).to_csv(tmp_path / "test.csv", index=False)
    args = [*PRIVATE_LINE, "--test", "test.csv", "--mask", "mdav:k=3", "--json", "-"]
    assert run_main(args) == 0
    figures = json.loads(capsys.readouterr().out)
    plain, masked = figures["choices"]
    assert (figures["training_records"], figures["validation_records"], figures["test_records"]) == (60, 5, 5)
    assert masked["learner"] == "a linear regression of y on data masked by mdav (k=3)"
    assert plain["chosen"] is not None and masked["n_private_models"] <= masked["distinct_models"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--features", "x,group"], "the model's columns ['group'] are not numeric"),
        (["--mask", "mdav:k=2..4"], "--mask 'mdav:k=2..4'; expected one method with one value"),
        (["--mask", "mdav:q=2"], "--mask 'mdav:q=2': 'q=2'; expected PARAMETER=VALUES"),
        (["--holdout", "0.99"], "holds out 59 and trains on 1; expected at least two each side"),
        (["--test", "line.csv"], "every record of --test is also a training record"),
        (["--test", "blank.csv"], "missing values in the test records: {'x': 1}"),
        (["--test", "words.csv"], "the model's columns ['x'] are not numeric in the test records"),
        (["--precision", "16"], "Invalid value for '--precision'"),
        (["--share", "1"], "share=1.0; expected the share of the training records"),
        (["--test", "missing.csv"], "file not found: 'missing.csv'"),
        (["--k", "0"], "Invalid value for '--k'"),
        (["--target", "nope"], "--target 'nope' is not a column"),
    ],
)
def test_bad_input_to_private_model_is_one_clear_error(tmp_path, monkeypatch, capsys, extra, message):
    monkeypatch.chdir(tmp_path)
    _line_file(tmp_path)
    assert run_main([*PRIVATE_LINE, *extra]) == 2
    assert message in capsys.readouterr().err
