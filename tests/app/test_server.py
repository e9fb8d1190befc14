"""The web application's guards and pages in-process (Starlette's TestClient): the token
on every request, the CSRF field on every form, the upload limit, downloads by their
names only, a bad form said on the page; and the pieces the pages draw."""

import html
import json
import os
import re
import select
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from rlopt.app.runs import Runner  # noqa: E402
from rlopt.app.server import AppState, create_app  # noqa: E402
from rlopt.app.views import chart as draw_chart  # noqa: E402
from rlopt.app.views import records_view  # noqa: E402
from rlopt.app.workspace import Workspace  # noqa: E402
from tests._helpers import noisy_file  # noqa: E402

TOKEN = "secret-token"


@pytest.fixture
def client(tmp_path):
    workspace = Workspace(tmp_path / "ws")
    runner = Runner(workspace, poll_seconds=60)  # nothing starts: the pages alone
    app = create_app(AppState(workspace, runner, TOKEN, max_upload_bytes=20_000))
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client
    runner.close()


def _csrf(client) -> str:
    return re.search(r'name="csrf" value="([0-9a-f]+)"', client.get("/").text).group(1)


def _files(tmp_path):
    original, masked = noisy_file(4, 30, 3)
    return {
        "original": ("a.csv", original.to_csv(index=False).encode()),
        "masked": ("b.csv", masked.to_csv(index=False).encode()),
    }


def test_the_token_is_needed_once_then_kept_in_a_strict_cookie(client):
    assert client.get("/").status_code == 403
    assert client.get("/?token=wrong").status_code == 403
    entry = client.get(f"/?token={TOKEN}", follow_redirects=False)
    assert entry.status_code == 303 and entry.headers["location"] == "/"
    cookie = entry.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert cookie.startswith("rlopt_token_80=")  # one cookie per port: two servers keep theirs
    assert client.get("/").status_code == 200  # the cookie now
    assert client.get("/static/app.css").status_code == 200


def test_a_form_without_the_servers_csrf_field_is_refused(client, tmp_path):
    client.get(f"/?token={TOKEN}")
    refused = client.post("/load", data={"csrf": "0" * 64}, files=_files(tmp_path))
    assert refused.status_code == 400 and "this form is not from this server" in refused.text
    accepted = client.post("/load", data={"csrf": _csrf(client)}, files=_files(tmp_path))
    assert accepted.status_code == 200 and "30 records" in accepted.text


def test_an_upload_above_the_limit_is_refused_with_its_size(client):
    client.get(f"/?token={TOKEN}")
    big = {"original": ("a.csv", b"a,b\n" + b"1,2\n" * 10_000), "masked": ("b.csv", b"a,b\n1,2\n")}
    refused = client.post("/load", data={"csrf": _csrf(client)}, files=big)
    assert refused.status_code == 400 and "expected at most 0.02 MB" in refused.text


def test_a_bad_form_is_said_on_the_page_and_a_run_queued_from_a_good_one(client, tmp_path):
    client.get(f"/?token={TOKEN}")
    csrf = _csrf(client)
    pair = client.post("/load", data={"csrf": csrf}, files=_files(tmp_path)).text
    ids = dict(re.findall(r'name="(original|masked)" value="([0-9a-f]{16})"', pair))
    bad = client.post("/runs", data={"csrf": csrf, **ids, "time_limit": "soon"})
    assert bad.status_code == 400 and "soon" in bad.text
    wrong_order = client.post("/runs", data={"csrf": csrf, **ids, "ordinal": "nope:a<b"})
    assert wrong_order.status_code == 400 and "nope" in wrong_order.text  # kept on the form
    queued = client.post("/runs", data={"csrf": csrf, **ids, "families": "wm"}, follow_redirects=False)
    run = queued.headers["location"]
    assert queued.status_code == 303 and re.fullmatch(r"/runs/\d{8}-\d{6}-[0-9a-f]{6}", run)
    page = client.get(run).text
    assert "queued" in page and "rlopt risk" in page and "assess_risk(" in page
    for name in ["spec.json", "../spec.json", "argv.json", "figures.json"]:  # only the outputs, once written
        assert client.get(f"{run}/files/{name}").status_code == 404
    assert client.get("/runs/20260101-000000-abcdef").status_code == 404


def test_the_chart_and_the_records_table_by_hand(tmp_path):
    history = [
        {"seconds": 0.0, "lower": None, "upper": 100},
        {"seconds": 1.0, "lower": 60, "upper": 100},
        {"seconds": 2.0, "lower": 60, "upper": 80},
    ]
    chart = draw_chart(history, width=160, height=130)  # x: 50 + 100 s/2; y: 10 + 100 (100 - v)/40
    # a step at each event (a value unchanged repeats its point), held to the end
    assert chart["upper"] == "50.0,10.0 100.0,10.0 100.0,10.0 150.0,10.0 150.0,60.0 150.0,60.0"
    assert chart["lower"] == "100.0,110.0 150.0,110.0 150.0,110.0 150.0,110.0"
    (tmp_path / "records.csv").write_text("record,reid_wm\n0,True\n1,False\n2,True\n")
    view = records_view(tmp_path / "records.csv", "reid_wm", False, "")
    assert [row[0] for row in view["rows"]] == ["1", "0", "2"]  # False first, stable
    found = records_view(tmp_path / "records.csv", "nope", False, "tru")
    assert found["n_rows"] == 2 and [row[0] for row in found["rows"]] == ["0", "2"]


def test_the_published_models_page_queues_its_runs_and_says_a_bad_form_on_itself(client):
    client.get(f"/?token={TOKEN}")
    page = client.get("/published").text
    assert 'id="update"' in page and 'id="choose"' in page and 'href="/published"' in page
    csrf = _csrf(client)
    missing = client.post("/published/update", data={"csrf": csrf}, files={"before": ("b.csv", b"v\n1\n")})
    assert missing.status_code == 400 and "no file chosen for the database after it" in missing.text
    assert 'id="update"' in missing.text  # the models page again, not the front page
    bad = client.post("/published/choose", data={"csrf": csrf, "source": "census", "k": "many"})
    assert bad.status_code == 400 and "many" in bad.text
    files = {"before": ("b.csv", b"v\n1\n2\n"), "after": ("a.csv", b"v\n2\n")}
    queued = client.post("/published/update", data={"csrf": csrf, "model": "mean"}, files=files)
    assert queued.status_code == 200 and "Update attack of b.csv and a.csv" in queued.text


def _queued(client) -> list[str]:
    return client.app.state.workspace.run_ids()


class _Said:
    """A response with its page as the officer reads it (HTML entities unescaped)."""

    def __init__(self, response):
        self.status_code, self.said = response.status_code, html.unescape(response.text)


def _post(client, *args, **kwargs) -> _Said:
    return _Said(client.post(*args, **kwargs))


def test_a_missing_or_wrong_input_is_refused_at_submission_and_the_form_kept(client, tmp_path):
    """No file, no family or a parameter the method does not take: each said when the
    form is sent (it used to map the bundled Census file, run wm, or start a run that
    failed seconds later with the form emptied), and the form drawn again as given."""
    client.get(f"/?token={TOKEN}")
    csrf = _csrf(client)
    mine = {"original": ("mine.csv", _files(tmp_path)["original"][1])}
    asked = {"csrf": csrf, "methods": "mdav:k=3", "families": "wm", "time_limit": "7", "source": ""}
    no_file = _post(client, "/compare", data=asked)
    assert no_file.status_code == 400 and "no file chosen" in no_file.said
    assert 'value="mdav:k=3"' in no_file.said and 'name="time_limit" value="7"' in no_file.said
    wrong = _post(client, "/compare", data={**asked, "methods": "noise:sd=0.2"}, files=mine)
    assert wrong.status_code == 400 and "'sd=0.2'" in wrong.said and "variance_ratio" in wrong.said
    assert 'value="noise:sd=0.2"' in wrong.said  # kept, and so is the file loaded
    # said beside the map's form, in the form's words, not 800 px above it in the command line's
    assert wrong.said.index('id="map-error"') > wrong.said.index("Or: choose what to publish")
    assert "Methods 'noise:sd=0.2'" in wrong.said and "--methods" not in wrong.said
    kept = re.search(
        r'name="kept_original" value="([0-9a-f]{16})" checked> keep the file loaded: <b>mine.csv', wrong.said
    )
    too_big = _post(
        client, "/compare", data={**asked, "methods": "mdav:k=40", "kept_original": kept.group(1)}
    )
    assert too_big.status_code == 400 and "40" in too_big.said  # k above the file's 30 records
    zero = _post(
        client, "/compare", data={**asked, "methods": "rank_swap:p=0", "kept_original": kept.group(1)}
    )
    assert zero.status_code == 400 and "rank_swap p=0.0: expected a value greater than 0" in zero.said
    no_family = _post(client, "/compare", data={**asked, "families": [], "kept_original": kept.group(1)})
    assert no_family.status_code == 400 and "no family ticked" in no_family.said
    both = _post(client, "/compare", data={**asked, "source": "census", "kept_original": kept.group(1)})
    assert both.status_code == 400 and "'mine.csv' and the bundled file 'census'" in both.said
    assert _queued(client) == []
    queued = _post(client, "/compare", data={**asked, "kept_original": kept.group(1)}, follow_redirects=False)
    assert queued.status_code == 303 and len(_queued(client)) == 1
    pair = _post(client, "/load", data={"csrf": csrf}, files=_files(tmp_path)).said
    ids = dict(re.findall(r'name="(original|masked)" value="([0-9a-f]{16})"', pair))
    form = {"csrf": csrf, **ids, "families": "wm", "time_limit": "9", "folds": "0"}
    for changed, said in [
        ({"families": []}, "no family ticked"),
        ({"time_limit": "0"}, "time limit '0'"),
        ({"folds": "1"}, "folds 1; expected 0 (none) or at least 2"),
        ({"attack_method": "rank_swap", "attack_parameters": "sd=1"}, "published parameter 'sd'"),
        ({"attack_method": "rank_swap", "attack_parameters": "p=many"}, "many"),
    ]:
        refused = _post(client, "/runs", data={**form, **changed})
        assert refused.status_code == 400 and said in refused.said, (changed, refused.said[-2000:])
        assert 'name="time_limit" value="' + changed.get("time_limit", "9") + '"' in refused.said
    assert len(_queued(client)) == 1
    made = {"csrf": csrf, "source": "census", "method": "noise", "parameters": "sd=0.2", "records": "50"}
    refused = _post(client, "/prepare", data=made)  # rlopt mask's own message, the form kept
    assert refused.status_code == 400 and "--sd: not a parameter of noise" in refused.said
    assert 'name="parameters" value="sd=0.2"' in refused.said and 'value="noise" selected' in refused.said


def test_an_upload_refused_says_the_files_role_and_keeps_the_other_file(client, tmp_path):
    client.get(f"/?token={TOKEN}")
    csrf = _csrf(client)
    files = _files(tmp_path)
    empty = _post(client, "/load", data={"csrf": csrf}, files={**files, "original": ("a.csv", b"")})
    assert empty.status_code == 400
    assert "the original file: 'a.csv' is empty (0 bytes); expected a header row and records" in empty.said
    kept = re.search(
        r'name="kept_masked" value="([0-9a-f]{16})" checked> keep the masked file loaded: <b>b.csv',
        empty.said,
    )
    assert kept and 'name="kept_original"' not in empty.said
    again = _post(
        client,
        "/load",
        data={"csrf": csrf, "kept_masked": kept.group(1)},
        files={"original": files["original"]},
    )
    assert again.status_code == 200 and "<b>a.csv</b> and <b>b.csv</b>" in again.said


def test_the_forms_defaults_are_the_commands_and_a_kinds_check_says_it_passed(client, tmp_path):
    import inspect

    from rlopt.cli.release import compare
    from rlopt.cli.risk import risk
    from rlopt.risk.assess import DEFAULT_FAMILIES

    def checked(html: str, form: str) -> list[str]:
        part = html[html.index(f'id="{form}"') :]
        part = part[: part.index("</form>")]
        return re.findall(r'name="families" value="(\w+)" checked', part)

    client.get(f"/?token={TOKEN}")
    csrf = _csrf(client)
    pair = _post(client, "/load", data={"csrf": csrf}, files=_files(tmp_path)).said  # 3 attributes
    on_risk = inspect.signature(risk).parameters
    assert checked(pair, "assess") == list(DEFAULT_FAMILIES)
    assert f'name="time_limit" value="{on_risk["time_limit"].default:g}"' in pair
    assert f'name="folds" value="{on_risk["folds"].default}"' in pair
    assert "kinds-checked" not in pair
    on_map = inspect.signature(compare).parameters
    front = html.unescape(client.get("/").text)
    assert checked(front, "compare") == [on_map["families"].default]
    assert f'name="time_limit" value="{on_map["time_limit"].default:g}"' in front
    ids = dict(re.findall(r'name="(original|masked)" value="([0-9a-f]{16})"', pair))
    columns = re.findall(r'name="all_columns" value="([^"]+)"', pair)
    declared = _post(
        client,
        "/declare",
        data={"csrf": csrf, **ids, "all_columns": columns, "columns": columns, "families": "wm"},
    ).said
    assert f"all {len(columns)} columns are read as declared" in declared
    assert checked(declared, "assess") == ["wm"]  # the form as the officer left it


def _events(folder, events, seconds_ago):
    """A run's event log, last written ``seconds_ago``."""
    import json
    import os
    import time

    (folder / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    written = time.time() - seconds_ago
    os.utime(folder / "events.jsonl", (written, written))


def test_the_live_view_counts_on_draws_to_now_and_tags_how_each_family_ended(client, tmp_path):
    """While a run runs: a running clock, the running family's time axis to now, and a
    family that ran its whole time limit unproven tagged as an interval at the limit (it
    had no tag, a proven one had); once ended, the tags and ends the figures give."""
    import json

    from rlopt.app.live import family_views

    client.get(f"/?token={TOKEN}")
    workspace = client.app.state.workspace
    a, b = (workspace.store(name, content) for name, content in _files(tmp_path).values())
    folder = workspace.runs / "20260101-120000-abcdef"
    folder.mkdir()
    spec = {"kind": "risk", "original": a.id, "masked": b.id, "families": ["wm", "sb"], "time_limit": 10.0}
    (folder / "spec.json").write_text(json.dumps(spec))
    (folder / "pid").write_text("1")

    def interval(family, seconds, elapsed, lower, upper):
        sources = {"lower_source": "neutral start (AM)", "upper_source": "number of records"}
        return (
            {"event": "interval", "family": family, "seconds": seconds, "elapsed": elapsed}
            | sources
            | {
                "lower": lower,
                "upper": upper,
            }
        )

    events = [
        {"event": "step", "message": "learning wm (time limit 10.0 s)", "elapsed": 0.1},
        interval("wm", 0.0, 0.2, 5, 30),
        interval("wm", 1.0, 1.2, 10, 20),
        {"event": "step", "message": "learning sb (time limit 10.0 s)", "elapsed": 10.3},  # wm: 10.1 s
        interval("sb", 0.0, 10.4, 12, 30),
        interval("sb", 1.0, 11.4, 15, 25),
    ]
    views = family_views(events, time_limit=10.0, now=15.4, figures={})  # sb has run 5 s
    assert views["wm"]["tag"] == "interval at the time limit" and not views["wm"]["running"]
    assert views["wm"]["chart"]["end"] == pytest.approx(10.1)
    assert views["sb"]["tag"] is None and views["sb"]["running"]
    assert views["sb"]["chart"]["end"] == pytest.approx(5.0)  # to now, past its last change at 1 s
    early = family_views(events[:4], time_limit=60.0, now=15.4, figures={})
    assert early["wm"]["tag"] is None  # ended before its limit: how, the figures will say
    _events(folder, events, seconds_ago=4.0)
    shown = client.get(f"/runs/{folder.name}").text
    assert re.search(r'running for <span class="clock" data-elapsed="[\d.]+">', shown)
    assert re.search(
        r'now: learning sb \(time limit 10.0 s\), for <span class="clock" data-elapsed="(4|5)\.\d">', shown
    )
    wm, sb = (shown[shown.index(f'id="family-{f}"') :] for f in ("wm", "sb"))
    assert '<span class="ended">interval at the time limit</span>' in wm[: wm.index("</h3>")]
    assert '<span class="running">running</span>' in sb[: sb.index("</h3>")]
    assert re.search(r'class="axis end">(4|5)\.\d s<', sb)
    assert "The axis runs from 12 records, the first count verified (neutral start (AM))" in html.unescape(sb)
    figures = {
        "headline": {"rate": 0.3875, "status": "interval", "upper_rate": 0.9425},
        "families": [
            {"family": "wm", "status": "time_limit", "seconds": 10.05},
            {"family": "sb", "status": "optimal", "seconds": 6.5},
        ],
    }
    _events(
        folder,
        [*events, interval("sb", 6.4, 16.8, 25, 25), {"event": "end", "status": "complete", "elapsed": 17.0}],
        0,
    )
    (folder / "figures.json").write_text(json.dumps(figures))
    (folder / "exit.json").write_text(json.dumps({"returncode": 0, "error": None}))
    ended = client.get(f"/runs/{folder.name}").text
    wm, sb = (ended[ended.index(f'id="family-{f}"') :] for f in ("wm", "sb"))
    assert '<span class="ended">interval at the time limit</span>' in wm[: wm.index("</h3>")]
    assert 'class="axis end">10.1 s<' in wm and 'class="axis end">6.5 s<' in sb
    assert '<span class="proven">proven</span>' in sb[: sb.index("</h3>")]
    assert 'id="step"' not in ended and "running for" not in ended
    assert '<td class="figure">38.75 % – 94.25 %</td>' in client.get("/").text  # the list of runs


def test_every_response_has_a_content_security_policy_the_pages_satisfy_and_an_icon(client, tmp_path):
    """Scripts and styles from the server only (no inline one in any page), a run's
    report sandboxed under its own policy (its inline style, script and data: images),
    and /favicon.ico served (it was a 404)."""
    import json

    from rlopt.app.security import PAGE_POLICY, REPORT_POLICY

    assert client.get("/").headers["content-security-policy"] == PAGE_POLICY  # the 403 too
    client.get(f"/?token={TOKEN}")
    pair = client.post("/load", data={"csrf": _csrf(client)}, files=_files(tmp_path))
    for response in [client.get("/"), client.get("/models"), client.get("/published"), pair]:
        assert response.headers["content-security-policy"] == PAGE_POLICY
        assert response.headers["x-content-type-options"] == "nosniff"
        assert re.findall(r"<script(?![^>]*\ssrc=)[^>]*>", response.text) == []  # no inline script
        assert "<style" not in response.text and " style=" not in response.text
        assert not re.search(r"\son[a-z]+=", response.text)  # no inline handler
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    folder = client.app.state.workspace.runs / "20260101-120000-abcdef"
    folder.mkdir()
    (folder / "spec.json").write_text(json.dumps({"kind": "risk", "original": "x", "masked": "y"}))
    (folder / "report.html").write_text("<html><body>report</body></html>")
    report = client.get(f"/runs/{folder.name}/files/report.html?view=1")
    assert report.status_code == 200 and report.headers["content-security-policy"] == REPORT_POLICY


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="a display is a Linux/BSD variable")
def test_serve_without_a_display_says_to_open_the_address_by_hand(tmp_path):
    """It used to say nothing: webbrowser found no browser, or started a console one."""
    environment = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    server = subprocess.Popen(
        [sys.executable, "-m", "rlopt", "serve", "--workspace", str(tmp_path)],
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=environment,
    )
    said, deadline = b"", time.monotonic() + 60
    try:  # what it says until it says where to go (or says nothing more for a minute)
        while b"in a browser" not in said and time.monotonic() < deadline:
            if select.select([server.stderr], [], [], 1)[0]:
                said += os.read(server.stderr.fileno(), 4096) or b"(ended)"
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(30)
    text = said.decode()
    address = re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", text).group(0)
    assert f"rlopt serve: no display found: open {address} in a browser\n" in text


def test_the_drivers_box_adds_drivers_to_the_command_and_the_code(client, tmp_path):
    client.get(f"/?token={TOKEN}")
    csrf = _csrf(client)
    pair = client.post("/load", data={"csrf": csrf}, files=_files(tmp_path)).text
    assert 'name="drivers"' in pair and 'name="drivers" checked' not in pair  # offered, not ticked
    ids = dict(re.findall(r'name="(original|masked)" value="([0-9a-f]{16})"', pair))
    plain = client.post("/runs", data={"csrf": csrf, **ids, "families": "wm"}, follow_redirects=False)
    assert "--drivers" not in client.get(plain.headers["location"]).text
    asked = {"csrf": csrf, **ids, "families": "wm", "drivers": "on"}
    page = client.get(client.post("/runs", data=asked, follow_redirects=False).headers["location"]).text
    assert "--drivers" in page and "drivers=True" in page


def test_the_pair_offers_no_fully_synthetic_method_and_the_map_takes_one(tmp_path):
    """A pair is measured by record linkage: the form lists masking methods only, and a
    fully synthetic method typed in the pair's form is the clear error; the map takes one
    (its cell's risk is the membership worst case)."""
    from rlopt.app.forms import map_options
    from rlopt.app.prepare import make_pair
    from rlopt.app.views import choices
    from rlopt.exceptions import InputError
    from rlopt.masking.methods import MASKING_METHODS

    offered = choices()["methods"]
    assert "mdav" in offered and not {m for m in offered if MASKING_METHODS[m].synthetic}
    with pytest.raises(InputError, match="synthetic_copula makes a fully synthetic file"):
        make_pair(Workspace(tmp_path), "census", method="copula")
    asked = {"methods": "dp_histogram:epsilon=1", "seed": "0", "loss": "pmse", "jobs": "1"}
    assert map_options(asked | {"families": ["wm"], "time_limit": "10"}, 100)["methods"] == asked["methods"]


def test_the_threshold_field_adds_it_to_the_command_and_the_code_and_a_bad_one_is_refused(client, tmp_path):
    client.get(f"/?token={TOKEN}")
    csrf = _csrf(client)
    pair = client.post("/load", data={"csrf": csrf}, files=_files(tmp_path)).text
    assert 'name="threshold"' in pair
    ids = dict(re.findall(r'name="(original|masked)" value="([0-9a-f]{16})"', pair))
    asked = {"csrf": csrf, **ids, "families": "wm", "threshold": "10%"}
    page = client.get(client.post("/runs", data=asked, follow_redirects=False).headers["location"]).text
    assert "--threshold 10%" in page and "threshold=&#39;10%&#39;" in page
    refused = client.post("/runs", data={**asked, "threshold": "150%"}).text
    assert "threshold &#39;150%&#39; is outside (0, 100 %]" in refused and 'value="150%"' in refused


def test_a_fully_synthetic_cell_of_a_map_is_drawn_as_an_advantage_and_offers_no_linkage_report(
    client, tmp_path
):
    import pandas as pd

    from rlopt.app.runs import CompareSpec
    from rlopt.app.views import grid_view

    client.get(f"/?token={TOKEN}")
    workspace = client.app.state.workspace
    original, _ = noisy_file(3, 30, 2)
    loaded = workspace.store("mine.csv", original.to_csv(index=False).encode()).id
    spec = CompareSpec(loaded, "synthetic_copula", loss="pmse")
    run_id = client.app.state.runner.submit(spec)  # queued, never started: the rows are ours
    folder = workspace.run(run_id)
    cells = pd.DataFrame(
        {
            "method": ["synthetic_copula", "pram"], "parameters": [float("nan"), float("nan")],
            "label": ["synthetic_copula", "pram"], "seed": [0, 0], "key": ["a", "b"],
            "risk": [0.30, 0.10], "risk_low": [0.10, float("nan")], "risk_upper": [0.48, 0.20],
            "risk_status": ["estimate", "time_limit"], "risk_source": ["wm", "wm"],
            "risk_kind": ["membership", "re-identification"], "pmse": [0.01, 0.02],
        }
    )  # fmt: skip
    cells.to_csv(folder / "results.csv", index=False)
    grid = grid_view(folder, spec)
    assert grid["axis"] == "worst-case re-identification, or membership advantage (fully synthetic)"
    point = grid["points"][0]  # the bar: the out-of-sample interval around the estimate
    assert point["low"] > point["at"] > point["high"]
    grid_html = client.app.state.templates.get_template("_grid.html")
    page = html.unescape(grid_html.render(run_id=run_id, csrf="x", **grid))
    assert "membership advantage 0.300 out of sample (0.100 to 0.480)" in page
    assert (
        "fully synthetic: no linkage report" in page and page.count(">open for a risk report</button>") == 1
    )
    assert "2 cells finished" in page
    said = _post(client, f"/runs/{run_id}/cell", data={"csrf": _csrf(client), "cell": "a"})
    assert said.status_code == 400 and "synthetic_copula is fully synthetic" in said.said


def test_the_synthetic_release_page_queues_a_membership_run_and_says_a_bad_form_on_itself(client):
    client.get(f"/?token={TOKEN}")
    page = client.get("/synthetic").text
    assert 'id="membership"' in page and "synthetic_copula" in page and 'href="/synthetic"' in page
    csrf = _csrf(client)
    bad = _post(client, "/synthetic/membership", data={"csrf": csrf, "source": "census", "permutations": "5"})
    assert bad.status_code == 400 and "expected at least 19" in bad.said and 'id="membership"' in bad.said
    nothing = _post(client, "/synthetic/membership", data={"csrf": csrf})
    assert nothing.status_code == 400 and "no file chosen" in nothing.said
    data = {"csrf": csrf, "source": "census", "generator": "dp_histogram", "epsilon": "1", "families": ["wm", "owa"],
            "time_limit": "5", "folds": "3", "reserve_share": "0.2"}  # fmt: skip
    queued = client.post("/synthetic/membership", data=data, follow_redirects=False)
    assert queued.status_code == 303
    (run_id,) = _queued(client)
    spec = json.loads((client.app.state.workspace.run(run_id) / "spec.json").read_text())
    assert spec["kind"] == "membership" and spec["generator"] == "dp_histogram" and spec["epsilon"] == 1
    assert spec["attack_families"] == ["wm", "owa"] and spec["folds"] == 3 and spec["reserve_share"] == 0.2
    original, _ = noisy_file(4, 30, 3)
    three = {
        role: (f"{role}.csv", original.to_csv(index=False).encode())
        for role in ("training", "holdout", "synthetic")
    }
    before = set(_queued(client))
    queued = client.post(
        "/synthetic/membership", data={"csrf": csrf, "folds": "2"}, files=three, follow_redirects=False
    )
    assert queued.status_code == 303
    (new,) = set(_queued(client)) - before
    spec = json.loads((client.app.state.workspace.run(new) / "spec.json").read_text())
    assert spec["data"] is None and all(spec[role] for role in ("training", "held_out", "synthetic"))


def test_the_models_page_names_the_officers_file_in_its_command(client, tmp_path):
    client.get(f"/?token={TOKEN}")
    original, _ = noisy_file(4, 30, 3)
    files = {"released": ("mine.csv", original.to_csv(index=False).encode())}
    qis = ",".join(original.columns[:2])
    said = _post(
        client, "/models", data={"csrf": _csrf(client), "quasi_identifiers": qis, "k": "2"}, files=files
    ).said
    assert f"rlopt models mine.csv --quasi-identifiers {qis} --k 2" in said
    assert str(client.app.state.workspace.root) not in said  # no workspace copy's path on the page
