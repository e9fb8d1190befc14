"""The web application's runs without a browser: a run is the ``rlopt risk`` command it
shows (run again, it gives the same figures), a Stop is its Ctrl-C and keeps the interval
reached, runs queue, a restarted server queues again what had not started, and nothing a
request names reaches the file system unchecked."""

import json
import re
import shlex
import signal
import subprocess
import sys
import time

import pytest

from rlopt.app.runs import Runner, RunSpec, read_events, reproduction, run_state, spec_of
from rlopt.app.workspace import Workspace
from rlopt.exceptions import InputError
from tests._helpers import noisy_file

pytest.importorskip("filelock")


def _csv(frame) -> bytes:
    return frame.to_csv(index=False).encode()


def _loaded(workspace, seed=4, n=30, d=3, **kwargs):
    original, masked = noisy_file(seed, n, d, **kwargs)
    return workspace.store("original.csv", _csv(original)).id, workspace.store("masked.csv", _csv(masked)).id


def _wait(workspace, run_id, statuses, seconds=120):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        state = run_state(workspace.run(run_id))
        if state["status"] in statuses:
            return state
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} still {state['status']} after {seconds} s")


def test_a_file_or_run_is_reached_only_by_an_identifier_the_workspace_made(tmp_path):
    workspace = Workspace(tmp_path / "ws")
    stored = workspace.store("../../etc/passwd.csv", b"a,b\n1,2\n")
    assert stored.path.parent.parent == workspace.files and stored.name == "../../etc/passwd.csv"
    assert workspace.file(stored.id).path == stored.path
    assert stored.path.name == "passwd.csv"  # the name's safe characters
    assert workspace.store("../../etc/passwd.csv", b"a,b\n1,2\n").id == stored.id  # by name and content
    assert workspace.store("other.csv", b"a,b\n1,2\n").id != stored.id
    for hostile in ["../ws", "..", "/etc/passwd", stored.id + "/../x", ""]:
        with pytest.raises(InputError, match="no loaded file"):
            workspace.file(hostile)
        with pytest.raises(InputError, match="no run"):
            workspace.run(hostile)
    with pytest.raises(InputError, match=r"'x.exe': expected a .csv, .tsv, .txt, .parquet file"):
        workspace.store("x.exe", b"MZ")


def test_one_server_holds_a_workspace(tmp_path):
    code = (
        "import sys, time; from rlopt.app.workspace import Workspace; "
        "w = Workspace(sys.argv[1]); w.lock(); w.announce('http://127.0.0.1:1/?token=x'); "
        "print('locked', flush=True); time.sleep(30)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(
            InputError, match=r"in use by another rlopt serve at http://127.0.0.1:1/\?token=x"
        ):
            Workspace(tmp_path).lock()
        if sys.platform != "win32":  # the address holds the token: the user's only
            assert (tmp_path / "serve.address").stat().st_mode & 0o077 == 0
    finally:
        holder.kill()
        holder.wait()
    Workspace(tmp_path).lock()  # released when its holder died


def test_a_run_is_reproduced_on_the_officers_files_in_a_new_folder_to_the_same_figures(tmp_path):
    """The reproduce command and code name the files as the officer loaded them (the
    workspace's copies in a comment), and the command, run where those files are, writes
    into a new folder: the run's own folder is left as it was (it used to be the
    command's working folder, which a re-run overwrote)."""
    workspace = Workspace(tmp_path / "ws")
    original, masked = noisy_file(4, 30, 3)
    files = {"my original.csv": _csv(original), "released.csv": _csv(masked)}
    stored = [workspace.store(name, content) for name, content in files.items()]
    runner = Runner(workspace)
    try:
        run_id = runner.submit(RunSpec(stored[0].id, stored[1].id, families=["wm", "sb"], time_limit=20))
        state = _wait(workspace, run_id, {"complete", "incomplete", "failed"})
    finally:
        runner.close()
    assert state["status"] == "complete", state
    folder = workspace.run(run_id)
    figures = json.loads((folder / "figures.json").read_text())
    events, _ = read_events(folder)
    assert {e["family"] for e in events if e["event"] == "interval"} == {"wm", "sb"}
    shown = reproduction(spec_of(state["spec"]), workspace, run_id)
    *comments, command = shown["command"].splitlines()
    assert command.startswith(f"mkdir rlopt-{run_id}-rerun && rlopt risk 'my original.csv' released.csv ")
    assert str(workspace.root) not in command and all(line.startswith("# ") for line in comments)
    assert all(str(s.path) in comments[-1] for s in stored)  # where the copies are
    code = shown["python"]
    assert "load_table('my original.csv')" in code and "load_table('released.csv')" in code
    assert "assess_risk(" in code and "families=['wm', 'sb']" in code
    compile(code, "reproduce.py", "exec")
    mine = tmp_path / "mine"  # the officer's folder, with the files under their names
    mine.mkdir()
    for name, content in files.items():
        (mine / name).write_bytes(content)
    left = {p.name: p.read_bytes() for p in folder.iterdir()}
    rlopt = f"{shlex.quote(sys.executable)} -m rlopt "
    subprocess.run(
        shown["command"].replace("&& rlopt ", f"&& {rlopt}"),
        shell=True,
        cwd=mine,
        check=True,
        capture_output=True,
    )
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == left  # the run's folder untouched
    inputs = (folder / "report.html").read_text().split("<h2>Inputs</h2>")[1]
    assert '<td class="text">wm, sb</td>' in inputs  # the report's inputs as a reader writes them
    assert "[" not in inputs and "None" not in inputs and "'" not in inputs
    repeated = json.loads((mine / f"rlopt-{run_id}-rerun" / "figures.json").read_text())
    for row, other in zip(figures["families"], repeated["families"], strict=True):
        assert (row["family"], row["n_correct"], row["bound"]) == (
            other["family"],
            other["n_correct"],
            other["bound"],
        )


@pytest.mark.parametrize("server_ignores_ctrl_c", [False, True], ids=["", "server started in background"])
def test_a_stop_is_a_ctrl_c_that_keeps_the_interval_reached(tmp_path, server_ignores_ctrl_c):
    """Stop is the run's Ctrl-C, also from a server started with SIGINT ignored
    (``rlopt serve &``), which its runs used to inherit."""
    if server_ignores_ctrl_c and sys.platform == "win32":
        pytest.skip("SIGINT dispositions are POSIX")
    previous = signal.signal(
        signal.SIGINT, signal.SIG_IGN if server_ignores_ctrl_c else signal.default_int_handler
    )
    workspace = Workspace(tmp_path / "ws")
    original, masked = _loaded(
        workspace, seed=3, n=60, d=4, scale=(0.8, 1.0, 1.2, 1.5)
    )  # sb: not proven in 60 s
    runner = Runner(workspace)
    try:
        run_id = runner.submit(RunSpec(original, masked, families=["sb"], time_limit=120))
        folder = workspace.run(run_id)
        end = time.monotonic() + 120
        while not any(e["event"] == "interval" and e["lower"] is not None for e in read_events(folder)[0]):
            assert time.monotonic() < end and run_state(folder)["status"] in ("queued", "running")
            time.sleep(0.2)
        started = time.monotonic()
        runner.stop(run_id)
        state = _wait(workspace, run_id, {"interrupted", "failed", "complete"}, seconds=60)
        assert time.monotonic() - started < 30
    finally:
        runner.close()
        signal.signal(signal.SIGINT, previous)
    assert state["status"] == "interrupted", state
    reached = [e for e in read_events(folder)[0] if e["event"] == "interval"][-1]
    assert reached["lower"] is not None and reached["lower"] <= reached["upper"] <= 60
    said = (folder / "output.log").read_text()  # the interval, as Ctrl-C prints it
    assert re.search(r"^  sb: [\d.]+% interrupted \(bound [\d.]+%, \d+ records\)", said, re.M), said
    figures = json.loads((folder / "figures.json").read_text())  # a stopped run has its figures and report
    assert (
        figures["headline"]["stopped"] == ["sb"] and figures["families"][0]["n_correct"] == reached["lower"]
    )
    assert 'id="answer">At least' in (folder / "report.html").read_text()


def test_runs_queue_a_queued_one_can_be_cancelled_and_a_restart_queues_what_had_not_started(tmp_path):
    workspace = Workspace(tmp_path / "ws")
    original, masked = _loaded(workspace)
    spec = RunSpec(original, masked, families=["wm"], time_limit=10)
    runner = Runner(workspace, slots=1, poll_seconds=60)  # its loop sleeps: nothing starts
    first, second, third = (runner.submit(spec) for _ in range(3))
    runner.stop(second)
    runner.close()
    assert [run_state(workspace.run(r))["status"] for r in (first, second, third)] == [
        "queued",
        "cancelled",
        "queued",
    ]
    restarted = Runner(workspace, slots=2)
    try:
        states = [_wait(workspace, r, {"complete", "failed"}) for r in (first, third)]
    finally:
        restarted.close()
    assert [s["status"] for s in states] == ["complete", "complete"]
    assert run_state(workspace.run(second))["status"] == "cancelled"


def test_a_bad_option_ends_the_run_with_the_command_lines_message(tmp_path):
    workspace = Workspace(tmp_path / "ws")
    original, masked = _loaded(workspace)
    runner = Runner(workspace)
    try:
        run_id = runner.submit(RunSpec(original, masked, families=["nope"]))
        state = _wait(workspace, run_id, {"failed", "complete"})
    finally:
        runner.close()
    assert state["status"] == "failed" and "nope" in state["error"]
    unknown = Runner(workspace)
    try:
        with pytest.raises(InputError, match="no loaded file 'zzz'"):
            unknown.submit(RunSpec("zzz", masked))
    finally:
        unknown.close()


def test_a_map_stopped_by_the_server_resumes_where_it_stopped(tmp_path):
    from rlopt.app.runs import CompareSpec

    workspace = Workspace(tmp_path / "ws")
    original, _ = noisy_file(3, 60, 4, scale=(0.8, 1.0, 1.2, 1.5))
    loaded = workspace.store("mine.csv", _csv(original)).id
    spec = CompareSpec(loaded, "noise:variance_ratio=0.2|0.3|0.5", families=["sb"], time_limit=3)
    # no cell is proven before its 3 s: the server stops the map inside its second cell
    runner = Runner(workspace)
    run_id = runner.submit(spec)
    folder = workspace.run(run_id)
    end = time.monotonic() + 120
    while not list((folder / "cells").glob("*.json")) if (folder / "cells").exists() else True:
        assert time.monotonic() < end
        time.sleep(0.2)
    runner.close()  # the server stops: the map is stopped between or inside its cells
    first = {p.name: p.stat().st_mtime_ns for p in (folder / "cells").glob("*.json")}
    assert run_state(folder)["status"] == "stopped with the server" and 1 <= len(first) < 3
    restarted = Runner(workspace)
    try:
        state = _wait(workspace, run_id, {"complete", "failed", "incomplete"}, seconds=180)
    finally:
        restarted.close()
    assert state["status"] == "complete"
    cells = {p.name: p.stat().st_mtime_ns for p in (folder / "cells").glob("*.json")}
    assert len(cells) == 3 and all(
        cells[name] == mtime for name, mtime in first.items()
    )  # not computed again
    assert "3 row(s) in results.csv" in (folder / "output.log").read_text()


def test_the_update_attack_and_the_private_model_run_as_their_commands_and_show_on_their_pages(tmp_path):
    """{1, 2} becomes {2}: the mean moves from 1.5 to 2, and only removing r1 explains it
    (worked by hand in tests/cli/test_integral.py); y = 2x learns one line from every
    subsample. Each run's page shows what its command printed, the update its report."""
    import numpy as np
    import pandas as pd
    from starlette.testclient import TestClient

    from rlopt.app.runs import ChoiceSpec, UpdateSpec
    from rlopt.app.server import AppState, create_app

    workspace = Workspace(tmp_path / "ws")
    before = workspace.store("before.csv", b"ID,v\nr1,1\nr2,2\n").id
    after = workspace.store("after.csv", b"ID,v\nr2,2\n").id
    x = np.arange(60.0)
    line = workspace.store("line.csv", _csv(pd.DataFrame({"x": x, "y": 2 * x}))).id
    runner = Runner(workspace, slots=2)
    try:
        update = runner.submit(UpdateSpec(before, after, model="mean", id_column="ID"))
        choice = runner.submit(
            ChoiceSpec(line, model="linear", target="y", features="x", subsamples=40, precision=2)
        )
        states = [_wait(workspace, run, {"complete", "failed"}) for run in (update, choice)]
        assert [s["status"] for s in states] == ["complete", "complete"], states
        figures = json.loads((workspace.run(update) / "figures.json").read_text())
        assert figures["modifications"] == ["{-r1}"] and figures["removed_surely"] == ["r1"]
        chosen = json.loads((workspace.run(choice) / "figures.json").read_text())["choices"][0]
        assert chosen["model"] == "y = 0 + 2 x" and chosen["generators"] == 40
        for run, spec in zip((update, choice), (s["spec"] for s in states), strict=True):
            compile(reproduction(spec_of(spec), workspace, run)["python"], "reproduce.py", "exec")
        app = create_app(AppState(workspace, runner, "t", max_upload_bytes=10**6))
        with TestClient(app, base_url="http://127.0.0.1") as client:
            client.get("/?token=t")
            update_page, choice_page = (client.get(f"/runs/{run}").text for run in (update, choice))
            listed = client.get("/").text
    finally:
        runner.close()
    assert "Update attack of before.csv and after.csv" in update_page
    assert "report.html?view=1" in update_page and "removed in every one: r1" in update_page
    assert "removes record r1." in (workspace.run(update) / "report.html").read_text()  # not "removes r1"
    assert "Private model of line.csv" in choice_page and "the chosen model: y = 0 + 2 x" in choice_page
    assert "rlopt private-model " in choice_page and "No report" not in choice_page
    assert "private-model" in listed and "integral" in listed
    assert '<td class="figure">not integrally private</td>' in listed


def test_a_membership_run_of_a_generator_prints_its_calibrated_figures_and_names_its_file(tmp_path):
    from rlopt.app.runs import MembershipSpec
    from rlopt.app.views import headline, run_view

    workspace = Workspace(tmp_path / "ws")
    original, _ = noisy_file(5, 60, 2)
    loaded = workspace.store("mine.csv", _csv(original)).id
    spec = MembershipSpec(data=loaded, time_limit=4, folds=3, reserve_share=0.2, seed=1)
    assert spec.argv(workspace, "again")[:2] == ["membership", "mine.csv"]
    runner = Runner(workspace)
    try:
        run_id = runner.submit(spec)
        state = _wait(workspace, run_id, {"complete", "failed"}, seconds=240)
    finally:
        runner.close()
    assert state["status"] == "complete", state.get("error")
    folder = workspace.run(run_id)
    figures = json.loads((folder / "figures.json").read_text())
    assert figures["out_of_sample"]["folds"] == 3 and set(figures["anchors"]) == {"ideal", "copy"}
    view = run_view(workspace, folder)
    assert view["files"] == ["mine.csv"]
    assert view["summary"].startswith("membership advantage (TPR - FPR) out of sample:")
    assert (
        view["answer"]["text"].startswith("Membership advantage (TPR - FPR)")
        and "out of sample" in view["answer"]["text"]
    )
    assert headline(folder).startswith("membership advantage") and "out of sample" in headline(folder)
    code = reproduction(spec, workspace, run_id)["python"]
    assert "membership_risk(" in code and "reserve=reserve" in code
