"""``rlopt serve`` in a real browser (Debian's chromium driven by Playwright): an officer
loads the M4-33 pair, runs wm and ci, sees the intervals update and end proven at the
figures ``rlopt risk`` gives, stops a Census run and keeps its interval, downloads the
report and runs the command the page shows to the same figures; hostile names are shown
escaped, an empty file gets the command line's message, no request passes without the
token. With ``RLOPT_APP_SCREENSHOTS=FOLDER`` the screens are saved there (docs/app)."""

import json
import os
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("starlette")
playwright = pytest.importorskip("playwright.sync_api")
expect = playwright.expect

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``rlopt serve`` on a free port, its workspace in a temporary folder; its address."""
    workspace = tmp_path_factory.mktemp("workspace")
    process = subprocess.Popen(
        [sys.executable, "-m", "rlopt", "serve", "--no-browser", "--workspace", str(workspace)],
        stderr=subprocess.PIPE,
        text=True,
    )
    line = process.stderr.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", line)
    assert match, line
    yield {"base": match.group(1), "token": match.group(2), "workspace": workspace}
    process.send_signal(2)
    process.wait(60)


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        if os.environ.get("RLOPT_REQUIRE_BROWSER"):
            pytest.fail("chromium is required (RLOPT_REQUIRE_BROWSER is set) but not installed")
        pytest.skip("chromium not installed (apt-get install chromium)")
    with playwright.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1100, "height": 900}, accept_downloads=True)
    page = context.new_page()
    # every swap of an event into the page, counted from the first one, and anything the
    # Content-Security-Policy refused
    page.add_init_script(
        "window.swaps = 0; document.addEventListener('htmx:sseMessage', () => window.swaps++);"
        "window.refused = []; document.addEventListener('securitypolicyviolation',"
        " (e) => window.refused.push(e.violatedDirective + ' ' + e.blockedURI));"
    )
    page.goto(f"{server['base']}/?token={server['token']}")
    yield page
    context.close()


def _shot(page, name):
    folder = os.environ.get("RLOPT_APP_SCREENSHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


def _pair(folder, *args):
    """A pair of files made by the command line, in ``folder``."""
    subprocess.run([sys.executable, "-m", "rlopt", *args], check=True, capture_output=True, cwd=folder)


def _load(page, original, masked):
    page.set_input_files("input[name=original]", str(original))
    page.set_input_files("input[name=masked]", str(masked))
    page.click("#load button")


def _run(page, families, time_limit, folds=0):
    for box in page.locator("input[name=families]").all():
        box.set_checked(box.get_attribute("value") in families)
    page.fill("input[name=time_limit]", str(time_limit))
    page.fill("input[name=folds]", str(folds))
    page.click("#run")
    page.wait_for_url(re.compile(r"/runs/\d{8}-\d{6}-[0-9a-f]{6}$"))


def test_a_request_without_the_token_is_refused(server):
    for path in ["/", "/runs/20260101-000000-abcdef/events", "/static/app.css", "/?token=wrong"]:
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(server["base"] + path, timeout=10)
        assert refused.value.code == 403


def test_m433_wm_and_ci_close_live_and_the_page_reproduces_rlopt_risk(page, server, tmp_path):
    _pair(tmp_path, "mask", "--preset", "M4-33", "--out-dir", "m433")
    _shot(page, "1-load")
    _load(page, tmp_path / "m433" / "original.csv", tmp_path / "m433" / "masked.csv")
    assert page.locator("table.columns tbody tr").count() == 4  # M4-33's four attributes
    _shot(page, "2-files-and-assess")
    _run(page, {"wm", "ci"}, 60)
    page.wait_for_selector("#status.complete", timeout=240_000)
    assert page.evaluate("window.swaps") >= 4  # at least two updates of each family's interval
    _shot(page, "4-results")
    # the answer first: one line under the title, above every panel and chart, as in the report
    answer = page.locator("#answer")
    assert re.fullmatch(
        r"Worst case: [\d.]+ % of the records \(\d+ of 400\) re-identified, by \w+, proven\.",
        answer.inner_text(),
    )
    assert "proven" in answer.get_attribute("class")
    top = answer.bounding_box()["y"]
    assert top < 200 and top < page.locator("#families").bounding_box()["y"]
    assert page.frame_locator("iframe.report").locator("#answer").inner_text() == answer.inner_text()
    # the report under its own sandboxed policy: its data: images drawn
    page.frame_locator("iframe.report").locator("img[data-rendered]").first.wait_for(state="attached")
    drawn = page.frame_locator("iframe.report").locator("img").first.get_attribute("data-rendered")
    assert drawn and not drawn.startswith("0x"), drawn
    assert page.evaluate("window.refused") == []  # the page's own policy refused nothing
    shown = {f: page.locator(f"#family-{f} h3").inner_text() for f in ("wm", "ci")}
    # the command the page shows, run where the files are: the same figures, in a new
    # folder, and the run's own folder as it was
    command = page.locator("#command").inner_text()
    assert "rlopt risk original.csv masked.csv " in command
    run_id = page.url.rsplit("/", 1)[1]
    folder = server["workspace"] / "runs" / run_id
    left = {p.name: p.read_bytes() for p in folder.iterdir()}
    rlopt = f"{sys.executable} -m rlopt "
    subprocess.run(
        command.replace("&& rlopt ", f"&& {rlopt}"),
        shell=True,
        check=True,
        cwd=tmp_path / "m433",
        capture_output=True,
    )
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == left
    figures = json.loads((tmp_path / "m433" / f"rlopt-{run_id}-rerun" / "figures.json").read_text())
    for row in figures["families"]:
        assert row["status"] == "optimal"
        assert shown[row["family"]].startswith(f"{row['family']}: [{row['n_correct']}, {row['bound']}]")
        assert "proven" in shown[row["family"]]
    # the per-record table: sorted by a click, filtered by a search
    page.click("#records-section summary")
    page.wait_for_selector("table.records tbody tr")
    assert "400 records" in page.locator("#records p").inner_text()
    page.click("table.records th a:text('reid_ci')")
    page.wait_for_selector("table.records th a:text('reid_ci ▲')")
    headers = page.locator("table.records th").all_inner_texts()
    column = headers.index("reid_ci ▲")
    cells = [row.split("\t")[column] for row in page.locator("table.records tbody tr").all_inner_texts()]
    assert cells == sorted(cells) and cells[0] == "False"  # ascending: the records ci misses first
    page.fill("#find", "399")
    page.wait_for_function("() => document.querySelector('#records p').innerText.startsWith('1 record ')")
    with page.expect_download() as download:
        page.click("a[href$='/files/report.html'][download]")
    report = Path(download.value.path()).read_text()
    assert "<html" in report and "wm" in report
    assert page.evaluate("window.refused") == []  # the records table's requests too
    page.locator("header a.brand").scroll_into_view_if_needed()
    page.click("header a.brand")  # the list of runs gives the run's figure
    page.wait_for_url(re.compile(r".*/$"))
    proven = figures["headline"]["rate"]
    assert f"proven {100 * proven:.2f} %" in page.locator("table.runs tbody tr").first.inner_text()


def test_a_stop_keeps_the_interval_of_a_census_run(page, server, tmp_path):
    page.select_option("select[name=source]", "census")  # made in the page, by rlopt's commands
    page.select_option("select[name=method]", "rank_swap")
    page.fill("input[name=parameters]", "p=10")
    page.click("#prepare button")
    made = page.locator("pre.command").first.inner_text()
    assert (
        "rlopt data census --out census-original.csv" in made and "--method rank_swap --p 10 --seed 0" in made
    )
    assert page.locator("table.columns tbody tr").count() == 13
    _run(page, {"wm"}, 600)
    # until the interval has narrowed from both ends (a verified count, a proven ceiling)
    page.wait_for_function(
        """() => {
            const shown = document.querySelector('#family-wm h3');
            const found = shown && shown.innerText.match(/\\[(\\d+), (\\d+)\\]/);
            return found && Number(found[2]) < 1080;
        }""",
        timeout=240_000,
    )
    # the clocks count on and the running family's time axis reaches now between changes
    # (waited for: a loaded machine draws late)
    clocks = "|".join(page.locator("#step .clock").all_inner_texts())
    end = float(page.locator("#family-wm text.end").text_content().removesuffix(" s"))
    assert "running" in page.locator("#family-wm h3").inner_text()
    page.wait_for_function(
        """([clocks, end]) => {
            const now = [...document.querySelectorAll('#step .clock')].map((e) => e.innerText).join('|');
            const axis = document.querySelector('#family-wm text.end');
            return now !== clocks && axis && parseFloat(axis.textContent) > end;
        }""",
        arg=[clocks, end],
        timeout=60_000,
    )
    _shot(page, "3-run-live")
    page.click("#stop button")
    page.wait_for_selector("#status.interrupted", timeout=120_000)
    page.wait_for_selector("#results")  # the page drawn again once the run has ended
    # what the event stream says after the page was drawn again
    expect(page.locator("#family-wm h3")).to_contain_text("interval when stopped", timeout=30_000)
    _shot(page, "5-stopped")
    # the answer first: at least the lower end, the worst case maybe higher; the report of what finished
    answer = page.locator("#answer")
    said = answer.inner_text()
    assert (
        said.startswith("At least ")
        and "wm did not finish" in said
        and "proven" not in answer.get_attribute("class")
    )
    assert page.frame_locator("iframe.report").locator("#answer").inner_text() == said
    reached = re.search(
        r"wm: [\d.]+% interrupted \(bound [\d.]+%, (\d+) records\)",
        page.locator("pre.summary").text_content(),
    )
    assert reached and int(reached.group(1)) < 1080  # the ceiling proven before the stop is kept


def test_an_empty_file_gets_the_command_lines_message_with_its_role_and_the_other_file_is_kept(
    page, tmp_path
):
    (tmp_path / "empty.csv").write_bytes(b"")
    (tmp_path / "other.csv").write_text("a,b\n" + "".join(f"{i},{2 * i}\n" for i in range(5)))
    _load(page, tmp_path / "empty.csv", tmp_path / "other.csv")
    assert (
        "the original file: 'empty.csv' is empty (0 bytes); expected a header row and records"
        in page.locator(".error").inner_text()
    )
    assert "keep the masked file loaded: other.csv" in page.locator("#load").inner_text()
    page.set_input_files("input[name=original]", str(tmp_path / "other.csv"))  # only the refused one again
    page.click("#load button")
    assert "5 records" in page.locator("main").inner_text()


def test_a_hostile_column_name_is_shown_as_text(page, tmp_path):
    hostile = '<img src=x onerror="window.pwned=1">'
    text = f'"{hostile.replace(chr(34), chr(34) * 2)}",b\n' + "".join(f"{i},{i * 2}\n" for i in range(12))
    (tmp_path / "a.csv").write_text(text)
    (tmp_path / "b.csv").write_text(text)
    _load(page, tmp_path / "a.csv", tmp_path / "b.csv")
    assert hostile in page.locator("table.columns").inner_text()
    assert page.locator("table.columns img").count() == 0 and page.evaluate("window.pwned") is None


def test_declared_kinds_are_checked_as_the_command_line_checks_them(page, tmp_path):
    rows = "".join(f"{i},{['low', 'mid', 'high'][i % 3]},{['a', 'b'][i % 2]}\n" for i in range(30))
    (tmp_path / "a.csv").write_text("id,edu,sex\n" + rows)
    (tmp_path / "b.csv").write_text("id,edu,sex\n" + rows)
    _load(page, tmp_path / "a.csv", tmp_path / "b.csv")
    page.select_option("select[name=id_column]", "id")
    page.fill("input[name=ordinal]", "edu:low<mid<high")
    page.fill("input[name=nominal]", "sex")
    page.click("#declare")
    kinds = page.locator("table.columns").inner_text()
    assert "edu\tordinal (low < mid < high)" in kinds and "sex\tnominal (2 levels)" in kinds
    assert "id" not in [
        row.split("\t")[0] for row in kinds.splitlines()[1:]
    ]  # the identifier is not linked on
    page.fill("input[name=ordinal]", "edu:low<high")  # a level left out
    page.click("#declare")
    assert "mid" in page.locator(".error").inner_text()
    assert page.input_value("input[name=ordinal]") == "edu:low<high"  # the form kept


def test_a_map_of_masking_methods_fills_in_and_a_cell_opens_for_assessment(page, tmp_path):
    from tests._helpers import noisy_file

    original, _ = noisy_file(6, 60, 3)
    original.to_csv(tmp_path / "mine.csv", index=False)
    page.set_input_files("#compare input[name=original]", str(tmp_path / "mine.csv"))
    page.fill("#compare input[name=methods]", "mdav:k=3|5; noise:variance_ratio=0.1")
    page.fill("#compare input[name=time_limit]", "10")
    page.click("#compare button")
    page.wait_for_url(re.compile(r"/runs/\d{8}-\d{6}-[0-9a-f]{6}$"))
    page.wait_for_selector("#status.complete", timeout=240_000)
    rows = page.locator("table.grid tbody tr")
    expect(rows).to_have_count(3, timeout=30_000)  # the grid drawn again once the run has ended
    expect(page.locator("svg.map circle")).to_have_count(3, timeout=30_000)
    assert page.locator("table.grid tr.pareto").count() >= 1
    _shot(page, "6-map")
    rows.first.locator("button").click()
    made = page.locator("pre.command").first.inner_text()
    # the pair of the cell shown, named after it, on the form with the map's settings
    assert "rlopt mask mine.csv --method mdav --k 3 --seed 0 --out mine-mdav-k=3-masked.csv" in made
    assert "mine.csv and mine-mdav-k=3-masked.csv" in page.locator("main p").first.inner_text()
    assert page.locator("table.columns tbody tr").count() == 3
    assert page.input_value("#assess input[name=time_limit]") == "10"
    ticked = page.locator("#assess input[name=families]:checked").all()
    assert [box.get_attribute("value") for box in ticked] == ["wm"]


def test_privacy_models_of_a_released_file(page, tmp_path):
    rows = "".join(f"{20 + i % 4},{i % 2},{1000 * (i % 5)}\n" for i in range(40))
    (tmp_path / "released.csv").write_text("AGE,ZIP,INCOME\n" + rows)
    page.click("nav a[href='/models']")
    page.set_input_files("input[name=released]", str(tmp_path / "released.csv"))
    page.fill("input[name=quasi_identifiers]", "AGE,ZIP")
    page.fill("input[name=confidential]", "INCOME")
    page.fill("input[name=k]", "3")
    page.click("#models button")
    summary = page.locator("#levels pre.summary").inner_text()
    assert "k-anonymity" in summary and "rlopt models" in page.locator("#levels pre.command").inner_text()
    _shot(page, "7-models")
    page.fill("input[name=quasi_identifiers]", "NOPE")
    page.set_input_files("input[name=released]", str(tmp_path / "released.csv"))
    page.click("#models button")
    assert "NOPE" in page.locator(".error").inner_text()


def test_an_update_attack_on_two_published_models_shows_its_report(page, tmp_path):
    """{r1, r2} becomes {r2}: the mean moves from 1.5 to 2, and of the single changes only
    removing r1 explains it (worked by hand in tests/cli/test_integral.py)."""
    (tmp_path / "before.csv").write_text("ID,v\nr1,1\nr2,2\n")
    (tmp_path / "after.csv").write_text("ID,v\nr2,2\n")
    page.click("nav a[href='/published']")
    page.set_input_files("#update input[name=before]", str(tmp_path / "before.csv"))
    page.set_input_files("#update input[name=after]", str(tmp_path / "after.csv"))
    page.fill("#update input[name=id_column]", "ID")
    page.select_option("#update select[name=model]", "mean")
    _shot(page, "8-published-models")
    page.click("#update button")
    page.wait_for_url(re.compile(r"/runs/\d{8}-\d{6}-[0-9a-f]{6}$"))
    page.wait_for_selector("#results iframe.report", timeout=60_000)  # the page reloaded at the end
    assert "removed in every one: r1" in page.locator("pre.summary").text_content()
    report = page.frame_locator("iframe.report")
    assert "Not integrally private" in report.locator("body").inner_text()
    assert "rlopt integral " in page.locator("#command").inner_text()
    _shot(page, "9-update-attack")
