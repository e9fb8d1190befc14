"""A run of ``rlopt serve`` is an ``rlopt`` command (``risk``, ``compare``, ``integral``,
``private-model``): the page's choices become its
arguments (:class:`RunSpec`, :meth:`RunSpec.argv`), it runs as a child process in the
run's folder, writes its events (``--events``), figures, report and per-record table
there, and a Stop is its Ctrl-C (the interval reached is kept, as on the command line).
The page shows the same command on the officer's own file names, writing into a new
folder (:func:`reproduction`): run again, it gives the same figures and leaves the run's
folder as it was; nothing is computed twice.

:class:`Runner` starts queued runs, at most ``slots`` at a time, stops them, and, after a
restart, queues again the runs that had not started; :func:`run_state` reads what a
run's folder says."""

from __future__ import annotations

import json
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import ClassVar

from rlopt.app.workspace import StoredFile, Workspace
from rlopt.exceptions import InputError

__all__ = [
    "EVENTS",
    "FILE_ROLES",
    "ChoiceSpec",
    "LearnedSpec",
    "CompareSpec",
    "MembershipSpec",
    "RunSpec",
    "UpdateSpec",
    "Runner",
    "error_line",
    "read_events",
    "reproduction",
    "rerun_folder",
    "run_state",
    "spec_of",
]

OUTPUTS = {"--json": "figures.json", "--report": "report.html", "--records-csv": "records.csv"}
EVENTS = "events.jsonl"
RERUN = "rlopt-{run_id}-rerun"
"""The folder a run's reproduce command writes into (new: it never touches the run's own)."""
STOP_GRACE_SECONDS = 30.0
"""How long a stopped run may take to write the figures it reached."""


@dataclass
class RunSpec:
    """What the officer chose: the two loaded files (workspace identifiers) and the
    options of ``rlopt risk`` (see its ``--help``), in its own words."""

    kind: ClassVar[str] = "risk"
    original: str
    masked: str
    families: list[str] = field(default_factory=lambda: ["wm"])
    time_limit: float = 60.0
    folds: int = 0
    columns: list[str] | None = None
    id_column: str | None = None
    ordinal: str | None = None
    nominal: str | None = None
    attack_method: str | None = None
    attack_params: dict[str, str] = field(default_factory=dict)
    seed: int = 0
    drivers: bool = False
    threshold: str | None = None

    def argv(self, workspace: Workspace, rerun: str | None = None) -> list[str]:
        """The ``rlopt`` arguments of this run (the outputs in the run's folder), or with
        ``rerun`` those of its reproduction (:func:`reproduction`)."""
        args = ["risk", *_inputs(workspace, [self.original, self.masked], rerun)]
        args += ["--families", ",".join(self.families), "--time-limit", f"{self.time_limit:g}"]
        args += ["--folds", str(self.folds), "--seed", str(self.seed)]
        args += ["--drivers"] if self.drivers else []
        args += ["--threshold", self.threshold] if self.threshold else []
        for flag, value in [
            ("--columns", None if self.columns is None else ",".join(self.columns)),
            ("--id-column", self.id_column),
            ("--ordinal", self.ordinal),
            ("--nominal", self.nominal),
            ("--attack-method", self.attack_method),
        ]:
            if value:
                args += [flag, value]
        if self.attack_method:
            for name, value in self.attack_params.items():
                args += [f"--{name.replace('_', '-')}", str(value)]
        for flag, name in OUTPUTS.items():
            args += [flag, _output(name, rerun)]
        return args if rerun else [*args, "--events", EVENTS, "--quiet"]

    def python(self, workspace: Workspace, rerun: str) -> str:
        """The Python that makes the same figures (``rlopt.risk.assess_risk``, the
        function ``rlopt risk`` calls), its report written into the folder ``rerun``."""
        original, masked = _inputs(workspace, [self.original, self.masked], rerun)
        options = {
            "families": self.families,
            "time_limit": self.time_limit,
            "folds": self.folds,
            "generalisation_families": ["wm"] if self.folds else [],
            "seed": self.seed,
            "columns": self.columns,
            "id_column": self.id_column,
            "drivers": self.drivers or None,
            "threshold": self.threshold,
        }
        lines = [
            "from pathlib import Path",
            "",
            "from rlopt.data import load_table",
            "from rlopt.report import render_risk_report",
            "from rlopt.risk import assess_risk",
            "",
            "result = assess_risk(",
            f"    load_table({original!r}),",
            f"    load_table({masked!r}),",
            *[f"    {name}={value!r}," for name, value in options.items() if value is not None],
        ]
        if self.ordinal or self.nominal:
            kinds = {"ordinal": self.ordinal, "nominal": self.nominal}
            lines.append(f"    kinds={ {k: v for k, v in kinds.items() if v}!r},")
        if self.attack_method:
            lines.append(f"    attack={ {'method': self.attack_method, **self.attack_params}!r},")
        lines += [
            ")",
            "print(result.headline)",
            f"out = Path({rerun!r})",
            "out.mkdir()",
            'render_risk_report(result, out / "report.html")',
        ]
        return "\n".join(lines)


@dataclass
class CompareSpec:
    """A risk-utility map of one loaded file: ``rlopt compare`` with the masking
    methods and parameter values ``methods`` (its grammar, e.g. ``mdav:k=3..7:2;
    rank_swap:p=5|15``). Its cells are kept in the run's folder, so a run stopped by
    the server's end is resumed where it stopped when the server starts again."""

    kind: ClassVar[str] = "compare"
    original: str
    methods: str
    families: list[str] = field(default_factory=lambda: ["wm"])
    time_limit: float = 60.0
    loss: str = "il1s"
    seed: int = 0
    jobs: int = 1

    def argv(self, workspace: Workspace, rerun: str | None = None) -> list[str]:
        (original,) = _inputs(workspace, [self.original], rerun)
        args = ["compare", original, "--methods", self.methods, "--families", ",".join(self.families)]
        args += ["--time-limit", f"{self.time_limit:g}", "--loss", self.loss, "--seed", str(self.seed)]
        args += ["--jobs", str(self.jobs), "--out-dir", rerun or "."]
        return args if rerun else [*args, "--no-progress"]

    def python(self, workspace: Workspace, rerun: str) -> str:
        (original,) = _inputs(workspace, [self.original], rerun)
        return "\n".join(
            [
                "from rlopt.experiments.compare import run_compare",
                "",
                "comparison = run_compare(",
                f"    {original!r},",
                f"    {self.methods!r},",
                f"    {rerun!r},  # the results folder",
                f"    families={self.families!r},",
                f"    time_limit={self.time_limit!r},",
                f"    loss={self.loss!r},",
                f"    seed={self.seed!r},",
                f"    jobs={self.jobs!r},",
                ")",
                "print(comparison.frame)",
            ]
        )


@dataclass(kw_only=True)
class LearnedSpec:
    """The learning algorithm of a run on published models (``rlopt integral`` and
    ``rlopt private-model`` take the same options)."""

    model: str = "tree"
    target: str | None = None
    features: str | None = None
    precision: int = 3
    max_depth: int = 3
    seed: int = 0

    def model_flags(self) -> list[str]:
        args = ["--model", self.model, "--precision", str(self.precision), "--max-depth", str(self.max_depth)]
        for flag, value in (("--target", self.target), ("--features", self.features)):
            if value:
                args += [flag, value]
        return [*args, "--seed", str(self.seed)]

    def model_options(self) -> list[str]:
        """The same options as Python keyword lines."""
        features = None if not self.features else [f.strip() for f in self.features.split(",")]
        options: dict[str, object] = {
            "model": self.model,
            "target": self.target or None,
            "features": features,
        }
        options |= {"precision": self.precision, "max_depth": self.max_depth, "seed": self.seed}
        return [f"    {name}={value!r}," for name, value in options.items() if value is not None]


@dataclass
class UpdateSpec(LearnedSpec):
    """The update attack on two published models: ``rlopt integral`` on the database
    before and after an update (two loaded files) and the learning algorithm."""

    kind: ClassVar[str] = "integral"
    before: str
    after: str
    id_column: str | None = None
    max_changes: int | None = None
    samples: int = 2000

    def argv(self, workspace: Workspace, rerun: str | None = None) -> list[str]:
        files = _inputs(workspace, [self.before, self.after], rerun)
        args = ["integral", *files, *self.model_flags(), "--samples", str(self.samples)]
        if self.id_column:
            args += ["--id-column", self.id_column]
        if self.max_changes is not None:
            args += ["--max-changes", str(self.max_changes)]
        args += ["--json", _output("figures.json", rerun), "--report", _output("report.html", rerun)]
        return args if rerun else [*args, "--no-progress"]

    def python(self, workspace: Workspace, rerun: str) -> str:
        before, after = _inputs(workspace, [self.before, self.after], rerun)
        options: dict[str, object] = {"id_column": self.id_column or None, "max_changes": self.max_changes}
        return "\n".join(
            [
                "from rlopt.integral.update import update_attack",
                "",
                "attack = update_attack(",
                f"    {before!r},",
                f"    {after!r},",
                *self.model_options(),
                *[f"    {name}={value!r}," for name, value in options.items() if value is not None],
                f"    samples={self.samples!r},",
                ")",
                'print("\\n".join(attack.lines()))',
            ]
        )


@dataclass
class ChoiceSpec(LearnedSpec):
    """The integrally private model of one loaded file: ``rlopt private-model``."""

    kind: ClassVar[str] = "private-model"
    data: str
    k: int = 5
    subsamples: int = 1000
    holdout: float = 0.3
    mask: str | None = None

    def argv(self, workspace: Workspace, rerun: str | None = None) -> list[str]:
        (data,) = _inputs(workspace, [self.data], rerun)
        args = ["private-model", data, *self.model_flags()]
        args += ["--k", str(self.k), "--subsamples", str(self.subsamples), "--holdout", f"{self.holdout:g}"]
        if self.mask:
            args += ["--mask", self.mask]
        args += ["--json", _output("figures.json", rerun)]
        return args if rerun else [*args, "--no-progress"]

    def python(self, workspace: Workspace, rerun: str) -> str:
        (data,) = _inputs(workspace, [self.data], rerun)
        options: dict[str, object] = {"k": self.k, "databases": self.subsamples, "holdout": self.holdout}
        return "\n".join(
            [
                "from rlopt.integral import private_model",
                "",
                "choice = private_model(",
                f"    {data!r},",
                *self.model_options(),
                *[f"    {name}={value!r}," for name, value in options.items()],
                *([f"    mask={self.mask!r},"] if self.mask else []),
                ")",
                'print("\\n".join(choice.lines()))',
            ]
        )


@dataclass
class MembershipSpec:
    """The membership attack on a fully synthetic release: ``rlopt membership`` on one
    loaded file split and given to ``generator`` (``data``), or on the generator's
    training file, held-out records and release (``training``, ``held_out``,
    ``synthetic``). ``attack_families``: the distance families searched (not ``families``,
    which names a risk run's live panels)."""

    kind: ClassVar[str] = "membership"
    data: str | None = None
    generator: str = "synthetic_copula"
    epsilon: float | None = None  # dp_histogram's
    training: str | None = None
    held_out: str | None = None  # not `holdout`: a private model's share is named so
    synthetic: str | None = None
    attack_families: list[str] = field(default_factory=lambda: ["wm"])
    time_limit: float = 60.0
    holdout_share: float = 0.3
    reserve_share: float | None = None
    folds: int = 5
    permutations: int = 0
    seed: int = 0

    def _three(self) -> list[str]:
        """The training file, the held-out records and the release (workspace ids)."""
        files = [self.training, self.held_out, self.synthetic]
        if any(f is None for f in files):
            raise InputError("a membership run takes one file and a generator, or the three files")
        return [str(f) for f in files]

    def argv(self, workspace: Workspace, rerun: str | None = None) -> list[str]:
        if self.data is not None:
            (data,) = _inputs(workspace, [self.data], rerun)
            args = [
                "membership",
                data,
                "--method",
                self.generator,
                "--holdout-share",
                f"{self.holdout_share:g}",
            ]
            args += [] if self.reserve_share is None else ["--reserve-share", f"{self.reserve_share:g}"]
            args += [] if self.epsilon is None else ["--epsilon", f"{self.epsilon:g}"]
        else:
            training, holdout, synthetic = _inputs(workspace, self._three(), rerun)
            args = ["membership", training, "--holdout", holdout, "--synthetic", synthetic]
        args += ["--families", ",".join(self.attack_families), "--time-limit", f"{self.time_limit:g}"]
        args += [
            "--folds",
            str(self.folds),
            "--permutations",
            str(self.permutations),
            "--seed",
            str(self.seed),
        ]
        args += ["--json", _output("figures.json", rerun)]
        return args if rerun else [*args, "--quiet"]  # the log is the summary: no step lines

    def python(self, workspace: Workspace, rerun: str) -> str:
        options = {
            "families": self.attack_families, "time_limit": self.time_limit, "folds": self.folds,
            "permutations": self.permutations, "seed": self.seed,
        }  # fmt: skip
        if self.data is not None:
            (data,) = _inputs(workspace, [self.data], rerun)
            head = [
                "from rlopt.data import load_table",
                "from rlopt.masking import masking_spec",
                "from rlopt.risk.membership import membership_risk, set_aside, split_release",
                "",
                f"frame, reserve = set_aside(load_table({data!r}), {self.reserve_share!r}, seed={self.seed})",
                "members, holdout, synthetic = split_release(",
                f"    frame, masking_spec({self.generator!r}, seed={self.seed}"
                + ("" if self.epsilon is None else f", epsilon={self.epsilon!r}")
                + "), "
                f"holdout_share={self.holdout_share!r}, seed={self.seed}",
                ")",
            ]
            files = "members, holdout, synthetic, reserve=reserve,"
        else:
            training, holdout, synthetic = _inputs(workspace, self._three(), rerun)
            head = [
                "from rlopt.data import load_table",
                "from rlopt.risk.membership import membership_risk",
                "",
            ]
            files = f"load_table({training!r}), load_table({holdout!r}), load_table({synthetic!r}),"
        return "\n".join(
            [
                *head,
                "result = membership_risk(",
                f"    {files}",
                *[f"    {name}={value!r}," for name, value in options.items()],
                ")",
                "print(result.out_of_sample)",
            ]
        )


Spec = RunSpec | CompareSpec | UpdateSpec | ChoiceSpec | MembershipSpec
SPECS: dict[str, type[Spec]] = {
    spec.kind: spec for spec in (RunSpec, CompareSpec, UpdateSpec, ChoiceSpec, MembershipSpec)
}
FILE_ROLES = ("original", "masked", "before", "after", "data", "training", "held_out", "synthetic")
"""The fields of a spec that name a loaded file."""


def spec_of(values: dict) -> Spec:
    """The spec a run's ``spec.json`` holds (its ``kind``: risk by default)."""
    fields = dict(values)
    return SPECS[fields.pop("kind", "risk")](**fields)


def rerun_folder(run_id: str) -> str:
    """The new folder the reproduction of run ``run_id`` writes into."""
    return RERUN.format(run_id=run_id)


def reproduction(spec: Spec, workspace: Workspace, run_id: str) -> dict[str, str]:
    """The shell command and the Python code that reproduce a run on the officer's own
    files (named as they were loaded), run in the folder that holds them: they write
    into a new folder (:func:`rerun_folder`), never into the run's; a comment says
    where the workspace keeps its copies of the files."""
    rerun = rerun_folder(run_id)
    stored = [workspace.file(getattr(spec, role)) for role in FILE_ROLES if getattr(spec, role, None)]
    names = _shown_names(stored)
    where = [
        f"# run in the folder that holds {' and '.join(names)}; it writes into a new folder, {rerun}",
        f"# the copies of your files are in: {', '.join(str(s.path) for s in stored)}",
    ]
    return {
        "command": "\n".join(
            [*where, f"mkdir {shlex.quote(rerun)} && rlopt {shlex.join(spec.argv(workspace, rerun))}"]
        ),
        "python": "\n".join([*where, spec.python(workspace, rerun)]),
    }


def _shown_names(stored: list[StoredFile]) -> list[str]:
    """The files as the officer named them (the last part of each upload's name), or
    the workspace's copies where two share a name."""
    names = [re.split(r"[\\/]", s.name)[-1] or s.path.name for s in stored]
    return names if len(set(names)) == len(names) else [str(s.path) for s in stored]


def _inputs(workspace: Workspace, ids: list[str], rerun: str | None) -> list[str]:
    """The input files of a command: the workspace's copies, or for a reproduction
    (``rerun`` given) the officer's own names."""
    stored = [workspace.file(file_id) for file_id in ids]
    return [str(s.path) for s in stored] if rerun is None else _shown_names(stored)


def _output(name: str, rerun: str | None) -> str:
    """An output file: in the run's folder, or in the reproduction's new one."""
    return name if rerun is None else f"{rerun}/{name}"


def read_events(folder: Path, offset: int = 0) -> tuple[list[dict], int]:
    """The whole event lines of a run written after byte ``offset``, and the offset past
    them (a line still being written waits for the next read)."""
    path = folder / EVENTS
    if not path.exists():
        return [], offset
    with path.open("rb") as stream:
        stream.seek(offset)
        chunk = stream.read()
    complete = chunk[: chunk.rfind(b"\n") + 1]
    events = [json.loads(line) for line in complete.decode("utf-8").splitlines() if line.strip()]
    return events, offset + len(complete)


def run_state(folder: Path) -> dict:
    """What a run's folder says: ``status`` (queued, running, complete, incomplete,
    interrupted, stopped with the server, cancelled, failed), the error line of a failed
    one, and its outputs."""
    spec = json.loads((folder / "spec.json").read_text(encoding="utf-8"))
    state = {"id": folder.name, "spec": spec, "error": None}
    ended = folder / "exit.json"
    if (folder / "cancelled").exists():
        return {**state, "status": "cancelled"}
    if not (folder / "pid").exists():
        return {**state, "status": "queued"}
    if not ended.exists():
        return {**state, "status": "running"}
    exit_ = json.loads(ended.read_text(encoding="utf-8"))
    events, _ = read_events(folder)
    ends = [e["status"] for e in events if e["event"] == "end"]
    if ends:  # rlopt risk says how it ended
        return {**state, "status": _interrupted(folder) if ends[-1] == "interrupted" else ends[-1]}
    code = exit_["returncode"]
    if code == 0:
        return {**state, "status": "complete"}
    if code == 130:
        return {**state, "status": _interrupted(folder)}
    if code == 1 and exit_.get("error") is None:  # figures written, some cell failed
        return {**state, "status": "incomplete"}
    return {**state, "status": "failed", "error": exit_.get("error") or f"exit code {code}"}


class Runner:
    """The runs of one server: ``slots`` at a time, the others queued in order."""

    def __init__(self, workspace: Workspace, slots: int = 1, poll_seconds: float = 0.2):
        if slots < 1:
            raise InputError(f"slots={slots}; expected at least 1 run at a time")
        self.workspace, self.slots, self.poll_seconds = workspace, slots, poll_seconds
        self._queue: deque[str] = deque()
        self._running: dict[str, subprocess.Popen] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._resume()
        self._thread = threading.Thread(target=self._loop, name="rlopt-runs", daemon=True)
        self._thread.start()

    def submit(self, spec: Spec) -> str:
        """Queue a run; its identifier. The files must be loaded (else an InputError)."""
        argv = spec.argv(self.workspace)  # checks the file identifiers
        folder = self.workspace.new_run()
        record = {"kind": spec.kind, **asdict(spec)}
        (folder / "spec.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
        (folder / "argv.json").write_text(json.dumps(argv), encoding="utf-8")
        with self._lock:
            self._queue.append(folder.name)
        return folder.name

    @property
    def running(self) -> int:
        """How many runs are running now."""
        with self._lock:
            return sum(process.poll() is None for process in self._running.values())

    def stop(self, run_id: str) -> None:
        """A queued run is cancelled; a running one gets Ctrl-C (it writes what it reached)."""
        folder = self.workspace.run(run_id)
        with self._lock:
            if run_id in self._queue:
                self._queue.remove(run_id)
                (folder / "cancelled").touch()
                return
            process = self._running.get(run_id)
        if process is not None and process.poll() is None:
            _interrupt(process)

    def close(self, wait: float = STOP_GRACE_SECONDS) -> None:
        """Stop every running run (each writes what it reached) and the loop."""
        self._closed.set()
        with self._lock:
            running = list(self._running.values())
            for run_id in self._running:  # a grid among them is resumed by the next server
                (self.workspace.run(run_id) / "stopped-by-server").touch()
        for process in running:
            _interrupt(process)
        deadline = time.monotonic() + wait
        for process in running:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
        self._thread.join(5)
        self._reap()

    def _resume(self) -> None:
        """After a restart: runs never started are queued again, in their order; a run
        whose process ended with the last server says so."""
        for run_id in sorted(self.workspace.run_ids()):
            folder = self.workspace.run(run_id)
            if not (folder / "spec.json").exists():
                continue
            state = run_state(folder)
            resumable = state["spec"].get("kind") == CompareSpec.kind
            if state["status"] == "queued":
                self._queue.append(run_id)
            elif state["status"] == "running" and not resumable:  # its server ended before it did
                _write_exit(folder, None, "the server stopped while this run was running")
            elif (
                resumable
                and state["status"] in ("running", "stopped with the server")
                and _stopped_by_server(folder)
            ):
                # a grid keeps its finished cells: run again, it computes the others
                for name in ("pid", "exit.json"):
                    (folder / name).unlink(missing_ok=True)
                self._queue.append(run_id)

    def _loop(self) -> None:
        while not self._closed.is_set():
            self._reap()
            with self._lock:
                while self._queue and len(self._running) < self.slots:
                    run_id = self._queue.popleft()
                    self._running[run_id] = self._start(run_id)
            self._closed.wait(self.poll_seconds)

    def _start(self, run_id: str) -> subprocess.Popen:
        folder = self.workspace.run(run_id)
        argv = json.loads((folder / "argv.json").read_text(encoding="utf-8"))
        log = (folder / "output.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, "-c", _CHILD, *argv],
            cwd=folder,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            **_own_group(),
        )
        log.close()
        (folder / "pid").write_text(str(process.pid), encoding="utf-8")
        return process

    def _reap(self) -> None:
        with self._lock:
            ended = [(run_id, p) for run_id, p in self._running.items() if p.poll() is not None]
            for run_id, _ in ended:
                del self._running[run_id]
        for run_id, process in ended:
            folder = self.workspace.run(run_id)
            _write_exit(folder, process.returncode, _error_line(folder / "output.log"))


def _interrupted(folder: Path) -> str:
    """An interrupted run's status: by the officer's Stop, or by the server's end."""
    return "stopped with the server" if (folder / "stopped-by-server").exists() else "interrupted"


def _stopped_by_server(folder: Path) -> bool:
    """Whether the run ended because its server stopped (not by the officer's Stop)."""
    return (folder / "stopped-by-server").exists() or not (folder / "exit.json").exists()


def error_line(text: str) -> str | None:
    """The last ``error: ...`` line an ``rlopt`` command printed, without its prefix."""
    errors = [line for line in text.splitlines() if line.startswith("error: ")]
    return errors[-1].removeprefix("error: ") if errors else None


def _error_line(log: Path) -> str | None:
    """The ``error: ...`` line a failed run printed in its log, if any."""
    return error_line(log.read_text(encoding="utf-8", errors="replace")) if log.exists() else None


def _write_exit(folder: Path, returncode: int | None, error: str | None) -> None:
    (folder / "exit.json").write_text(
        json.dumps({"returncode": returncode, "error": error}), encoding="utf-8"
    )


_CHILD = (
    "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.argv[0] = 'rlopt'; from rlopt.cli import main; main()"
)
"""A run's process: ``rlopt`` with Python's own Ctrl-C, whatever the server inherited (a
server started in the background, ``rlopt serve &`` or nohup, has SIGINT ignored, and a
child would keep it: Stop would then never reach the run)."""


def _own_group() -> dict:
    """A child in its own process group: the server's terminal Ctrl-C reaches the server,
    which stops its runs itself (each then writes what it reached)."""
    if sys.platform == "win32":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def _interrupt(process: subprocess.Popen) -> None:
    """The Ctrl-C of a run: SIGINT, or CTRL_BREAK_EVENT on Windows (``rlopt`` takes it as
    Ctrl-C)."""
    if sys.platform == "win32":
        process.send_signal(signal.CTRL_BREAK_EVENT)
    else:
        process.send_signal(signal.SIGINT)
