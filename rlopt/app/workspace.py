"""The workspace of ``rlopt serve``: one folder that one server holds (a lock), with the
files loaded into it (``files/``) and one folder per run (``runs/<id>/``). Everything a
page shows is read back from these files, so a restarted server shows what the last one
left, and nothing a request names reaches the file system unchecked: files and runs are
addressed by identifiers this module made."""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlopt.exceptions import InputError

__all__ = ["Workspace", "StoredFile", "default_workspace"]

_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")
_FILE_ID = re.compile(r"^[0-9a-f]{16}$")
ADDRESS = "serve.address"
"""The file holding the address of the server that holds the workspace."""
SUFFIXES = (".csv", ".tsv", ".txt", ".parquet")
"""The file kinds a user may load (those :func:`rlopt.data.load_table` reads)."""


def default_workspace() -> Path:
    """The user's data folder for rlopt (platformdirs: ~/.local/share/rlopt/workspace on
    Linux, ~/Library/Application Support/rlopt/workspace on macOS, %LOCALAPPDATA% on
    Windows)."""
    from platformdirs import user_data_path

    return user_data_path("rlopt", appauthor=False) / "workspace"


@dataclass(frozen=True)
class StoredFile:
    """A file loaded into the workspace: ``id`` addresses it, ``name`` is what the user
    called it (shown, never used as a path), ``path`` where it lies."""

    id: str
    name: str
    path: Path


class Workspace:
    """The folder ``root`` (made if missing), locked by :meth:`lock` for one server."""

    def __init__(self, root: str | Path):
        self.root = Path(root).expanduser().resolve()
        if self.root.exists() and not self.root.is_dir():
            raise InputError(f"--workspace {str(self.root)!r} is a file; expected a folder")
        self.files = self.root / "files"
        self.runs = self.root / "runs"
        for folder in (self.root, self.files, self.runs):
            folder.mkdir(parents=True, exist_ok=True)
        self._lock: Any = None  # filelock's lock, an OS lock that dies with the process

    def lock(self) -> None:
        """Hold the workspace for this process (released when it ends, even killed); a
        second server on the same folder is an InputError."""
        from filelock import FileLock, Timeout

        lock = FileLock(self.root / "serve.lock")
        try:
            lock.acquire(timeout=0)
        except Timeout:
            held = self.root / ADDRESS
            where = f" at {held.read_text(encoding='utf-8').strip()}" if held.is_file() else ""
            raise InputError(
                f"the workspace {str(self.root)!r} is in use by another rlopt serve{where}; open that "
                "address, stop that server, or give --workspace another folder"
            ) from None
        self._lock = lock

    def announce(self, address: str) -> None:
        """Write the holding server's address (with its token; readable by the user only),
        so that a second server on this workspace can point to it."""
        path = self.root / ADDRESS
        path.touch(mode=0o600)
        path.write_text(address, encoding="utf-8")

    def release(self) -> None:
        if self._lock is not None:
            (self.root / ADDRESS).unlink(missing_ok=True)
            self._lock.release()
            self._lock = None

    # files

    def store(self, name: str, content: bytes) -> StoredFile:
        """Keep an uploaded file under an identifier of its name and content, as its name
        reduced to letters, digits, ``.``, ``_`` and ``-`` (its suffix checked)."""
        suffix = Path(name).suffix.lower()
        if suffix not in SUFFIXES:
            raise InputError(f"{name!r}: expected a {', '.join(SUFFIXES)} file")
        file_id = hashlib.sha256(name.encode() + b"\0" + content).hexdigest()[:16]
        folder = self.files / file_id
        folder.mkdir(exist_ok=True)
        # the user's name, reduced to safe characters (the report names the file by it)
        stem = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(name).stem).strip("._") or "data"
        path = folder / f"{stem[:80]}{suffix}"
        if not path.exists():
            path.write_bytes(content)
        (folder / "upload-name").write_text(name, encoding="utf-8")
        return StoredFile(file_id, name, path)

    def file(self, file_id: str) -> StoredFile:
        """The stored file ``file_id`` (an InputError for anything else)."""
        folder = self.files / file_id
        paths = (
            [p for p in folder.iterdir() if p.suffix in SUFFIXES]
            if _FILE_ID.match(file_id) and folder.is_dir()
            else []
        )
        if not paths:
            raise InputError(f"no loaded file {file_id!r}")
        return StoredFile(file_id, (folder / "upload-name").read_text(encoding="utf-8"), paths[0])

    # runs

    def new_run(self) -> Path:
        """A new run's folder, named by its start time (sortable) and a random tail."""
        run_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        folder = self.runs / run_id
        folder.mkdir()
        return folder

    def run(self, run_id: str) -> Path:
        """The folder of run ``run_id`` (an InputError for anything else)."""
        folder = self.runs / run_id if _ID.match(run_id) else None
        if folder is None or not folder.is_dir():
            raise InputError(f"no run {run_id!r}")
        return folder

    def run_ids(self) -> list[str]:
        """Every run, newest first."""
        return sorted((p.name for p in self.runs.iterdir() if _ID.match(p.name)), reverse=True)
