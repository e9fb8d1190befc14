"""The web application's guards and pages in-process (Starlette's TestClient): the token
on every request, the CSRF field on every form, the upload limit, downloads by their
names only, a bad form said on the page; and the pieces the pages draw."""

import re

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
