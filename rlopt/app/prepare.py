"""Files made in the page: a bundled file masked with a registered method, or a
published test pair, made by the ``rlopt data`` and ``rlopt mask`` commands (shown to
the officer, as a run's command is) and then loaded like an upload."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from rlopt.app.runs import error_line
from rlopt.app.workspace import StoredFile, Workspace
from rlopt.data._bundled import BUNDLED_FILES
from rlopt.exceptions import InputError

__all__ = [
    "BUNDLED",
    "Made",
    "make_original",
    "make_pair",
    "mask_cell",
    "masking_parameters",
    "parameter_flags",
    "privacy_models",
]

BUNDLED = tuple(BUNDLED_FILES)
"""The files ``rlopt data`` writes (:data:`rlopt.data._bundled.BUNDLED_FILES`)."""

_PARAMETER = re.compile(r"^([a-z][a-z0-9_]*)=(.+)$")


@dataclass(frozen=True)
class Made:
    """A pair made by commands: the loaded files and the commands that made them."""

    original: StoredFile
    masked: StoredFile
    commands: list[str]


def parameter_flags(text: str) -> list[str]:
    """``p=10 variant=plain`` as the command line's ``--p 10 --variant plain`` (an
    InputError for anything else)."""
    flags: list[str] = []
    for item in shlex.split(text or ""):
        found = _PARAMETER.match(item)
        if found is None:
            raise InputError(f"masking parameter {item!r}; expected NAME=VALUE, e.g. p=10 or k=3")
        flags += [f"--{found.group(1).replace('_', '-')}", found.group(2)]
    return flags


def masking_parameters(text: str) -> dict[str, str]:
    """``p=10 variant=plain`` as ``{"p": "10", "variant": "plain"}`` (checked)."""
    flags = parameter_flags(text)
    return {flags[i].removeprefix("--").replace("-", "_"): flags[i + 1] for i in range(0, len(flags), 2)}


def make_pair(
    workspace: Workspace,
    source: str,
    *,
    method: str | None = None,
    parameters: str = "",
    records: int | None = None,
    seed: int = 0,
    cell: str = "",
) -> Made:
    """``source``: a bundled file (masked with ``method`` and its ``parameters``),
    ``preset:NAME`` (a published test pair, e.g. ``preset:M4-33``) or ``file:ID`` (a
    loaded file, masked here; its masked file named after ``cell`` when given)."""
    from rlopt.masking import PUBLISHED_FILES
    from rlopt.masking.grammar import spec_from_text
    from rlopt.masking.methods import check_linkable

    if method:  # checked as rlopt mask reads it, before any command runs
        check_linkable(spec_from_text(method, masking_parameters(parameters)))  # a pair to link
    commands: list[list[str]] = []
    if source.startswith("file:"):  # a loaded file, masked here
        loaded = workspace.file(source.removeprefix("file:"))
        masked = f"{_safe(cell or Path(loaded.name).stem)}-masked.csv"
        masking = ["--method", method or "", *parameter_flags(parameters), "--seed", str(seed)]
        commands.append(["mask", str(loaded.path), *masking, "--out", masked])
        return _made(workspace, commands, original=loaded, masked=masked)
    if source.startswith("preset:"):
        preset = source.removeprefix("preset:")
        if preset not in PUBLISHED_FILES:
            raise InputError(f"preset {preset!r}; expected one of {', '.join(PUBLISHED_FILES)}")
        commands.append(["mask", "--preset", preset, "--out-dir", preset])
        return _made(workspace, commands, f"{preset}/original.csv", f"{preset}/masked.csv")
    if source not in BUNDLED:
        raise InputError(f"source {source!r}; expected one of {', '.join(BUNDLED)} or preset:NAME")
    if not method:
        raise InputError(f"{source}: choose a masking method for the masked file")
    original, masked = f"{source}-original.csv", f"{source}-masked.csv"
    sample = [] if records is None else ["--records", str(records), "--seed", str(seed)]
    commands.append(["data", source, "--out", original, *sample])
    masking = ["--method", method, *parameter_flags(parameters), "--seed", str(seed)]
    commands.append(["mask", original, *masking, "--out", masked])
    return _made(workspace, commands, original, masked)


def mask_cell(
    workspace: Workspace, original: str, method: str, parameters: str, seed: int, label: str = ""
) -> Made:
    """The masked file of one cell of a map (``parameters`` as ``results.csv`` writes
    them: ``k=3, p=10``), by ``rlopt mask``, beside its loaded original; named after
    the file and the cell's ``label`` (``mine-mdav-k=3-masked.csv``)."""
    text = " ".join(part.strip() for part in parameters.split(",") if part.strip())
    name = f"{Path(workspace.file(original).name).stem}-{label}" if label else ""
    return make_pair(workspace, f"file:{original}", method=method, parameters=text, seed=seed, cell=name)


def _safe(name: str) -> str:
    """A file name of letters, digits and ``.=_-`` (a cell's label: ``mdav-k=3``)."""
    return re.sub(r"[^A-Za-z0-9.=_-]+", "-", name).strip("-.") or "data"


def _made(
    workspace: Workspace,
    commands: list[list[str]],
    original: str | StoredFile,
    masked: str,
) -> Made:
    """Run ``commands`` in a scratch folder; load what they wrote (``original`` unless
    it is a loaded file, and ``masked``), named as they wrote them. The commands are
    shown with a loaded file named as the officer named it."""
    with tempfile.TemporaryDirectory(dir=workspace.root) as folder:
        for argv in commands:
            _rlopt(argv, cwd=folder)
        if not isinstance(original, StoredFile):
            original = workspace.store(original.replace("/", "-"), (Path(folder) / original).read_bytes())
        stored = workspace.store(masked.replace("/", "-"), (Path(folder) / masked).read_bytes())
    shown = [[original.name if a == str(original.path) else a for a in argv] for argv in commands]
    return Made(original, stored, [f"rlopt {shlex.join(argv)}" for argv in shown])


def make_original(workspace: Workspace, source: str, records: int | None = None, seed: int = 0) -> StoredFile:
    """A bundled file (``rlopt data``) loaded into the workspace."""
    if source not in BUNDLED:
        raise InputError(f"source {source!r}; expected one of {', '.join(BUNDLED)}")
    sample = [] if records is None else ["--records", str(records), "--seed", str(seed)]
    with tempfile.TemporaryDirectory(dir=workspace.root) as folder:
        _rlopt(["data", source, "--out", f"{source}.csv", *sample], cwd=folder)
        return workspace.store(f"{source}.csv", (Path(folder) / f"{source}.csv").read_bytes())


def privacy_models(released: StoredFile, options: dict[str, str]) -> tuple[str, str]:
    """``rlopt models`` on a loaded file with ``options`` (``quasi_identifiers``,
    ``confidential``, ``k``, ``p``, ``l``, ``t``, ``epsilon``; empty ones left out): its
    summary, and the command on the officer's file, named as it was loaded (the run
    pages' commands do the same), the summary too. Quick: run while the page waits."""
    flags = []
    for name, value in options.items():
        if str(value).strip():
            flags += [f"--{name.replace('_', '-')}", str(value).strip()]
    done = _rlopt(["models", str(released.path), *flags], accepted=(0, 1))  # 1: a level not met
    summary = (done.stdout + done.stderr).replace(str(released.path), released.name)
    return summary, f"rlopt {shlex.join(['models', released.name, *flags])}"


def _rlopt(argv: list[str], cwd: str | None = None, accepted: tuple[int, ...] = (0,)):
    """``rlopt ARGV`` in a child process; an exit code not ``accepted`` is an InputError
    with the command's own error line."""
    done = subprocess.run([sys.executable, "-m", "rlopt", *argv], cwd=cwd, capture_output=True, text=True)
    if done.returncode not in accepted:
        raise InputError(error_line(done.stderr) or done.stderr.strip()[-500:])
    return done
