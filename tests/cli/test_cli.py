import json
import re
import subprocess
import sys

import pandas as pd
import pytest
from typer.testing import CliRunner

from rlopt._docs import help_text
from rlopt.cli import app
from rlopt.cli._app import COMMANDS
from rlopt.exceptions import InputError
from rlopt.linkage import dbrl
from rlopt.masking import build, published_recipe
from rlopt.masking.grammar import parse_groups

runner = CliRunner()


def test_preset_then_link_json(tmp_path):
    out = tmp_path / "m433"
    result = runner.invoke(app, ["mask", "--preset", "M4-33", "--out-dir", str(out)])
    assert result.exit_code == 0, result.output
    original, masked = build(published_recipe("M4-33"))
    pd.testing.assert_frame_equal(pd.read_csv(out / "original.csv"), original, check_dtype=False)
    for distance in ("am", "md"):
        result = runner.invoke(
            app,
            [
                "link",
                str(out / "original.csv"),
                str(out / "masked.csv"),
                "--distance",
                distance,
                "--json",
                "-",
            ],
        )
        assert result.exit_code == 0, result.output
        figures = json.loads(result.stdout)
        assert set(figures) >= {"n_records", "n_correct", "n_ties", "rate"}
        expected = dbrl(original, masked, distance=distance)
        assert figures["n_correct"] == expected.n_correct and figures["n_records"] == 400


def test_mask_file_with_groups_rank_swap_and_noise(tmp_path):
    frame = pd.DataFrame({"a": range(20), "b": range(20, 40), "c": [1.5] * 20}, dtype=float)
    frame.to_csv(tmp_path / "in.csv", index=False)
    cases = {
        "mdav.csv": ["--method", "mdav", "--groups", "a,b:4"],
        "rs.csv": ["--method", "rank-swap", "--p", "10", "--seed", "3", "--columns", "a,b"],
        "noise.csv": ["--method", "noise", "--variance-ratio", "0.1", "--columns", "a"],
    }
    for name, args in cases.items():
        result = runner.invoke(app, ["mask", str(tmp_path / "in.csv"), "--out", str(tmp_path / name), *args])
        assert result.exit_code == 0, result.output
    mdav = pd.read_csv(tmp_path / "mdav.csv")
    assert mdav["a"].nunique() == 5 and (mdav["c"] == 1.5).all()
    assert sorted(pd.read_csv(tmp_path / "rs.csv")["a"]) == list(frame["a"])


def test_parse_groups():
    assert parse_groups("A,B:3;C:8") == [(["A", "B"], 3), (["C"], 8)]
    with pytest.raises(InputError, match="expected COLUMN,COLUMN:K"):
        parse_groups("A,B")
    with pytest.raises(InputError, match="group size 'x'"):
        parse_groups("A,B:x")


def test_bad_input_exits_2_with_one_line(tmp_path):
    runner.invoke(app, ["mask", "--preset", "M4-33", "--out-dir", str(tmp_path)])
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlopt.cli",
            "link",
            str(tmp_path / "original.csv"),
            str(tmp_path / "masked.csv"),
            "--columns",
            "AGI,NOPE",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: original: unknown column(s) ['NOPE']; available: ['AFNLWGT', 'AGI', 'EMCONTRB', 'FEDTAX']"
    ]


def test_learn_json_has_the_documented_keys(tmp_path):
    from tests.milp.test_milp import noisy_file

    original, masked = noisy_file(9, 20, 3)
    original.to_csv(tmp_path / "o.csv", index=False)
    masked.to_csv(tmp_path / "m.csv", index=False)
    result = runner.invoke(
        app,
        [
            "learn",
            str(tmp_path / "o.csv"),
            str(tmp_path / "m.csv"),
            "--family",
            "ci",
            "--margin",
            "1e-4",
            "--json",
            "-",
            "--params-out",
            str(tmp_path / "p.json"),
        ],
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert {
        "family",
        "n_records",
        "n_correct",
        "n_correct_verified",
        "n_correct_strict",
        "status",
        "bound",
        "gap",
        "margin",
        "params",
        "solver",
        "seconds",
    } <= set(figures)
    assert set(figures["seconds"]) >= {"build", "solve", "total"}
    assert figures["status"] == "optimal" and figures["n_correct"] == figures["n_correct_verified"] == 15
    assert json.loads((tmp_path / "p.json").read_text())["family"] == "ci"


@pytest.mark.parametrize(
    "args, offered",
    [
        (["attack", "a.csv", "b.csv", "--method", "rank-swapping", "--distance", "pld"], "'am', 'md'"),
        (["reproduce", "--table", "3"], "'1', '2', '5'"),
        (["mask", "a.csv", "--out", "b.csv", "--method", "swap"], "expected one of mdav, rank_swap, noise"),
        (["learn", "a.csv", "b.csv", "--family", "nope"], "unknown distance family 'nope'"),
        (["learn", "a.csv", "b.csv", "--time-limit", "-1"], "greater than or equal to 0"),
        (["risk", "a.csv", "b.csv", "--generalisation", "am"], "'am'"),
        (["risk", "a.csv", "b.csv", "--families", "wm,am"], "'am'"),
        (["tradeoff", "a.csv", "--method", "mdav", "--values", "2", "--families", "am"], "'am'"),
        (["risk", "a.csv", "b.csv", "--threads", "0"], "greater than or equal to 1"),
    ],
)
def test_choices_are_checked_and_listed_by_the_parser(args, offered):
    # a value outside the choices never reaches the command: the parser names the ones it takes
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert offered in " ".join(result.output.replace("│", " ").split())  # the box's rules out


def test_every_command_shows_an_example_with_its_own_options():
    import re

    for command in COMMANDS:
        text = runner.invoke(app, [command, "--help"]).output
        example = " ".join(text.replace("│", " ").split()).split("Example: ", 1)
        assert len(example) == 2, command
        assert example[1].startswith(f"rlopt {command}"), command
        for option in re.findall(r"(--[a-z-]+)", example[1]):
            assert option in example[0], (command, option)  # the options table, above the example


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_reads_at_80_columns(command):
    """Every help at 80 columns: lines that fit, metavars that name the value (ORIGINAL,
    K, SECONDS), no type names, no <bool>, no {braces}, no cut words, and the summary in
    ``rlopt --help`` is the command's own short help."""
    text = help_text([] if command is None else [command])  # the renderer of docs/cli.md
    assert max(len(line) for line in text.splitlines()) <= 80, text
    for generic in ("<bool>", "<path>", "<str>", "<int>", "<float>", "{", "}", "…"):
        assert generic not in text, (command, generic)
    assert not re.search(r"\b(TEXT|FLOAT|INTEGER|BOOLEAN)\b", text), text
    if command is None:
        for name, entry in COMMANDS.items():
            assert re.search(rf"^  {name} +{re.escape(entry.summary[:20])}", text, re.M), name
    else:
        assert text.startswith(f"Usage: rlopt {command} [OPTIONS]"), text


def test_help_does_not_load_the_solvers():
    """``rlopt --help`` and importing the command line load neither scikit-learn nor Pyomo."""
    code = (
        "import sys, rlopt.cli, rlopt.cli._app as a; from typer.testing import CliRunner; "
        "CliRunner().invoke(a.app, ['--help']); "
        "print(sorted(m for m in ('sklearn', 'pyomo', 'highspy', 'pandas', 'scipy') if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]", loaded.stdout


@pytest.mark.parametrize(
    "args, offered",
    [
        (["risk", "a.csv", "b.csv", "--attack-method", "swapping"], "attacks exist for: rank_swap, mdav"),
        (["attack", "a.csv", "b.csv", "--method", "noise"], "no transparency attack on 'noise'"),
        (["risk", "a.csv", "b.csv", "--tradeoff-method", "swirl"], "expected one of mdav, rank_swap, noise"),
        (
            ["tradeoff", "a.csv", "--method", "swirl", "--values", "2"],
            "expected one of mdav, rank_swap, noise",
        ),
    ],
)
def test_method_choices_are_checked_by_the_parser(args, offered):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert offered in " ".join(result.output.replace("│", " ").split())


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["mask", "in.csv", "--method", "mdav", "--k", "3", "--columns", "NOPE", "--out", "x.csv"],
            "unknown column(s) ['NOPE']",
        ),
        (["data", "census", "--out", "missing/c.csv"], "the folder 'missing' does not exist"),
        (
            ["learn", "in.csv", "in.csv", "--scheduler", "tcp://h:8786"],
            "--scheduler tcp://h:8786 without --blocks",
        ),
        (["learn", "in.csv", "in.csv", "--jobs", "0"], "--jobs"),
        (["learn", "in.csv", "in.csv", "--blocks", "1"], "size=1; expected an integer >= 2"),
        (
            ["risk", "in.csv", "in.csv", "--jobs", "2", "--scheduler", "tcp://h:8786"],
            "--jobs 2 with --scheduler tcp://h:8786: give one of the two",
        ),
        (["risk", "in.csv", "in.csv", "--blocks", "1"], "size=1; expected an integer >= 2"),
    ],
)
def test_more_bad_input_ends_in_one_error_line(tmp_path, monkeypatch, capsys, args, message):
    from tests._helpers import run_main

    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [4.0, 1, 3, 2]}).to_csv("in.csv", index=False)
    code = run_main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ") and message in err[0], err
    assert not (tmp_path / "missing").exists()


def test_link_pld_on_a_large_file_warns_before_it_starts_and_still_answers(tmp_path, monkeypatch):
    import rlopt.linkage.probabilistic as probabilistic

    monkeypatch.setattr(probabilistic, "PLD_MAX_RECORDS", 50)
    original, masked = build(published_recipe("M4-33"))
    original[:60].to_csv(tmp_path / "o.csv", index=False)
    masked[:60].to_csv(tmp_path / "m.csv", index=False)
    result = runner.invoke(
        app, ["link", str(tmp_path / "o.csv"), str(tmp_path / "m.csv"), "--distance", "pld"]
    )
    assert result.exit_code == 0, result.output
    assert "warning: pld on 60 records: its one-to-one assignment is cubic" in result.stderr
    assert "pld: " in result.stdout and "of 60 records re-identified" in result.stdout
    monkeypatch.setattr(probabilistic, "PLD_MAX_RECORDS", 60)
    quiet = runner.invoke(
        app, ["link", str(tmp_path / "o.csv"), str(tmp_path / "m.csv"), "--distance", "pld"]
    )
    assert quiet.exit_code == 0 and "warning" not in quiet.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["risk", "a.csv", "b.csv", "--families", "foo"],
            "Invalid value for '--families': unknown distance family",
        ),
        (["risk", "a.csv", "b.csv", "--time-limit", "-1"], "Invalid value for '--time-limit'"),
        (["link", "a.csv", "b.csv", "--nope"], "No such option: --nope"),
        (["learn"], "Missing argument 'ORIGINAL'"),
    ],
)
def test_the_parsers_errors_are_one_line_too(capsys, args, message):
    from tests._helpers import run_main

    code = run_main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: ") and message in err[0], err
    assert err[0].endswith(f"(see: rlopt {args[0]} --help)")


def test_an_input_stream_that_ends_early_is_one_line_and_exit_1(capsys, monkeypatch, tmp_path):
    """EOFError (a worker's pipe that closed) reaches the user as one line, not a traceback."""
    import rlopt.data

    def ended(*args, **kwargs):
        raise EOFError

    monkeypatch.setattr(rlopt.data, "load_table", ended)
    from tests._helpers import run_main

    assert run_main(["link", str(tmp_path / "a.csv"), str(tmp_path / "b.csv")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: aborted"), err


def test_a_ctrl_c_before_a_command_keeps_anything_exits_130(monkeypatch, capsys):
    import rlopt.cli._app as cli_app

    def interrupted(**kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_app, "app", interrupted)
    with pytest.raises(SystemExit) as exit_:
        cli_app.main()
    assert exit_.value.code == 130
    assert capsys.readouterr().err == "interrupted: nothing was finished\n"


def test_a_ctrl_c_inside_a_command_that_keeps_nothing_says_so(monkeypatch, capsys, tmp_path):
    """typer ends a bare KeyboardInterrupt with 130 and no word: every command says it."""
    import rlopt.data

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(rlopt.data, "load_table", ctrl_c)
    from tests._helpers import run_main

    assert run_main(["models", str(tmp_path / "released.csv"), "--quasi-identifiers", "A"]) == 130
    assert capsys.readouterr().err == "interrupted: nothing was finished\n"


def test_learn_with_blocks_writes_their_certificate(tmp_path, monkeypatch, capsys):
    from tests._helpers import noisy_file, run_main

    monkeypatch.chdir(tmp_path)
    original, masked = noisy_file(3, 60, 4, scale=(0.8, 1.0, 1.2, 1.5))  # sb: not proven in 8 s
    original.to_csv("a.csv", index=False)
    masked.to_csv("b.csv", index=False)
    args = [
        "learn",
        "a.csv",
        "b.csv",
        "--family",
        "sb",
        "--time-limit",
        "8",
        "--blocks",
        "10",
        "--json",
        "r.json",
    ]
    assert run_main(args) == 0
    figures = json.loads((tmp_path / "r.json").read_text())
    blocks = figures["blocks"]
    assert blocks["n_blocks"] == 6 and figures["bound"] <= blocks["ceiling"]
    assert f"block ceiling {blocks['ceiling']} (" in capsys.readouterr().out


def test_risk_with_blocks_reports_their_ceiling_in_the_json_and_the_report(tmp_path, monkeypatch, capsys):
    import rlopt.milp.pipeline as pipeline
    from tests._helpers import UntilTheBlocksLowerTheCeiling, noisy_file, run_main

    monkeypatch.chdir(tmp_path)
    original, masked = noisy_file(3, 60, 4, scale=(0.8, 1.0, 1.2, 1.5))  # sb: not proven in 20 s
    original.to_csv("a.csv", index=False)
    masked.to_csv("b.csv", index=False)
    # the solve ends once the blocks of 6 lower the ceiling (each proven well under a second
    # once its worker has started; the workers' start is slow on a loaded machine): the
    # limit is an outer timeout
    until = UntilTheBlocksLowerTheCeiling(monkeypatch)
    monkeypatch.setitem(
        pipeline.learn.__kwdefaults__, "collaborators", pipeline.Collaborators(solve=until.solve)
    )
    args = ["risk", "a.csv", "b.csv", "--families", "sb", "--folds", "0", "--time-limit", "120"]
    args += ["--blocks", "6", "--jobs", "2", "--json", "r.json", "--report", "r.html"]
    assert run_main(args) == 0 and until.lowered
    figures = json.loads((tmp_path / "r.json").read_text())
    (row,) = figures["families"]
    blocks = row["blocks"]
    assert blocks["n_blocks"] == 10 and row["n_correct"] <= row["bound"] <= blocks["ceiling"] < 60
    assert figures["inputs"]["blocks"]["size"] == 6
    assert f"; block ceiling {blocks['ceiling']} (" in capsys.readouterr().out
    assert f"The block ceiling {blocks['ceiling']} (" in (tmp_path / "r.html").read_text()


def test_risk_events_are_json_lines_of_its_steps_and_intervals(tmp_path, monkeypatch):
    from tests._helpers import noisy_file, run_main

    monkeypatch.chdir(tmp_path)
    original, masked = noisy_file(4, 30, 3)
    original.to_csv("a.csv", index=False)
    masked.to_csv("b.csv", index=False)
    args = ["risk", "a.csv", "b.csv", "--families", "wm,sb", "--folds", "0", "--quiet", "--events", "e.jsonl"]
    assert run_main([*args, "--json", "r.json"]) == 0
    events = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert events[0]["event"] == "step" and events[-1] == {**events[-1], "event": "end", "status": "complete"}
    figures = json.loads((tmp_path / "r.json").read_text())
    for row in figures["families"]:  # each family's last interval is its row's
        last = [e for e in events if e["event"] == "interval" and e["family"] == row["family"]][-1]
        assert (last["lower"], last["upper"]) == (row["n_correct"], row["bound"])
    assert [e["elapsed"] for e in events] == sorted(e["elapsed"] for e in events)


def test_risk_events_end_interrupted_on_ctrl_c(tmp_path, monkeypatch):
    import rlopt.risk
    from tests._helpers import noisy_file, run_main

    def interrupted(*args, progress, **kwargs):
        progress("learning wm (time limit 60 s)")
        raise KeyboardInterrupt

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(rlopt.risk, "assess_risk", interrupted)
    original, masked = noisy_file(4, 30, 3)
    original.to_csv("a.csv", index=False)
    masked.to_csv("b.csv", index=False)
    assert run_main(["risk", "a.csv", "b.csv", "--quiet", "--events", "e.jsonl"]) == 130
    events = [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["step", "end"] and events[-1]["status"] == "interrupted"


def test_progress_asked_for_in_a_log_is_a_line_per_tenth(capsys):
    from rlopt.cli._options import progress_bar

    with progress_bar("linking records", True) as advance:  # stderr is not a terminal here
        for done in (0, 5, 10, 50, 99, 100):
            advance(done, 100)
    said = capsys.readouterr().err.splitlines()
    assert said == [f"linking records: {n} of 100" for n in (0, 10, 50, 99, 100)]
