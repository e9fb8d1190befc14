"""``rlopt serve``: time from the command to a usable page, memory of the idle server,
and how fast a page is answered while two solves run.

    python -m benchmarks.bench_app --repeat 3 --requests 20
    python -m benchmarks.bench_app --repeat 3 --requests 20 --before TREE   # two trees

Starts the server (a fresh workspace in a temporary folder) ``--repeat`` times and takes
the median start-up time and idle resident memory; then, with ``--slots 2``, loads the
Census rank-swapped pair (p = 10) through the page, starts two wm runs of 120 s, waits
until both solve, and times ``--requests`` requests of the front page and of a run page.
Prints a Markdown table (and writes it to ``--out`` when given) and appends one row to
``benchmarks/results/bench_app.csv``. Needs the ``app`` extra (and ``httpx``, in ``test``).
"""

from __future__ import annotations

import argparse
import io
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks import _files
from benchmarks._common import add_trees, over_trees, record


def start(workspace: Path, *extra: str) -> tuple[subprocess.Popen, str, float]:
    """The server, its address with the token, and the seconds to the first page."""
    began = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "rlopt", "serve", "--no-browser", "--workspace", str(workspace), *extra],
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    found = re.search(r"(http://\S+)", process.stderr.readline())
    if found is None:
        raise SystemExit("rlopt serve printed no address")
    address = found.group(1)
    while True:
        try:
            if httpx.get(address, follow_redirects=True, timeout=5).status_code == 200:
                return process, address, time.perf_counter() - began
        except httpx.TransportError:
            time.sleep(0.01)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def stop(process: subprocess.Popen) -> None:
    process.send_signal(2)
    process.wait(60)


def csv_bytes(frame) -> bytes:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue().encode()


def timed(client: httpx.Client, url: str, n: int) -> list[float]:
    seconds = []
    for _ in range(n):
        began = time.perf_counter()
        assert client.get(url).status_code == 200
        seconds.append(time.perf_counter() - began)
        time.sleep(0.1)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--out", type=Path)
    add_trees(parser)
    args = parser.parse_args()
    if over_trees("bench_app", args):
        return
    rows: list[tuple[str, str, list[float]]] = []
    starts: list[float] = []
    memory: list[float] = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as folder:
            process, address, started = start(Path(folder))
            httpx.get(address, follow_redirects=True)
            time.sleep(1.0)
            starts.append(started)
            memory.append(rss_mb(process.pid))
            stop(process)
    rows.append(("from `rlopt serve` to the first page", f"{statistics.median(starts):.2f} s", starts))
    rows.append(("resident memory of the idle server", f"{statistics.median(memory):.0f} MB", memory))

    census, masked = _files.pair("census-rs10")
    with tempfile.TemporaryDirectory() as folder:
        process, address, _ = start(Path(folder), "--slots", "2")
        base = address.split("/?")[0]
        with httpx.Client(base_url=base, follow_redirects=True, timeout=60) as client:
            front = client.get(address).text
            token = re.search(r'name="csrf" value="([0-9a-f]+)"', front)
            if token is None:
                raise SystemExit("no CSRF token on the front page")
            csrf = token.group(1)
            files = {
                "original": ("census.csv", csv_bytes(census)),
                "masked": ("masked.csv", csv_bytes(masked)),
            }
            pair = client.post("/load", data={"csrf": csrf}, files=files).text
            ids = re.findall(r'name="(original|masked)" value="([0-9a-f]{16})"', pair)
            form = {"csrf": csrf, **dict(ids), "families": "wm", "time_limit": "120", "folds": "0"}
            runs = [client.post("/runs", data=form).url.path for _ in range(2)]
            while not all("running" in client.get(run).text.split("</h1>")[0] for run in runs):
                time.sleep(0.5)
            time.sleep(15)  # both past loading, into their MILPs
            front_seconds = timed(client, "/", args.requests)
            run_seconds = timed(client, runs[0], args.requests)
            for run in runs:
                client.post(f"{run}/stop", data={"csrf": csrf})
        stop(process)
    for label, seconds in (("front page", front_seconds), ("a run's page", run_seconds)):
        rows.append(
            (
                f"{label} while two solves run ({args.requests} requests)",
                f"median {1000 * statistics.median(seconds):.0f} ms, max {1000 * max(seconds):.0f} ms",
                seconds,
            )
        )
    lines = ["| measure | figure | each |", "|---|---|---|"]
    lines += [
        f"| {label} | {figure} | {', '.join(f'{v:.3g}' for v in each)} |" for label, figure, each in rows
    ]
    text = "\n".join(lines)
    print(text)
    record(
        "bench_app",
        {
            "repeat": args.repeat,
            "requests": args.requests,
            "start_s": round(statistics.median(starts), 2),
            "idle_mb": round(statistics.median(memory)),
            "front_page_ms": round(1000 * statistics.median(front_seconds)),
            "front_page_max_ms": round(1000 * max(front_seconds)),
            "run_page_ms": round(1000 * statistics.median(run_seconds)),
            "run_page_max_ms": round(1000 * max(run_seconds)),
        },
    )
    if args.out is not None:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
