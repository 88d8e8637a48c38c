"""Registry entries: which daemon serves which workspace, through which socket, with which token.

One JSON file per running daemon in ``<runtime dir>/daemons/`` (mode 0600, written atomically):
``{"version": 1, "pid", "socket", "token", "folders": [absolute paths], "client": editor name,
"startedAt": epoch seconds}``. The file's modification time is the daemon's last editor activity
(:func:`touch`), so among several editors on one workspace the most recently active wins.

Readers (:func:`find_daemons`) trust an entry only when its socket lies inside
``<runtime dir>/sockets/`` (an entry pointing elsewhere is refused) and its process is alive; a
stale entry (process gone) is removed with its socket.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from pi_lsp.ipc.runtime_dir import private_subdir

VERSION = 1


@dataclass(frozen=True)
class DaemonEntry:
    """One registry entry, validated. ``last_active`` is epoch seconds (the file's mtime)."""

    path: Path
    pid: int
    socket: Path
    token: str
    folders: tuple[Path, ...]
    client: str
    last_active: float

    def serves(self, directory: Path) -> bool:
        """Whether ``directory`` is one of the entry's folders or inside one (paths resolved)."""
        target = directory.resolve()
        return any(target == folder or folder in target.parents for folder in self.folders)


class RefusedEntry(Exception):
    """An entry that must not be used (the message says why)."""


def new_name() -> str:
    """A fresh entry/socket name: ``<pid>-<random hex>``."""
    return f"{os.getpid()}-{secrets.token_hex(6)}"


def socket_path(name: str) -> Path:
    """``<runtime dir>/sockets/<name>.sock`` (the directory checked private)."""
    return private_subdir("sockets") / f"{name}.sock"


def write_entry(name: str, *, socket: Path, token: str, folders: list[Path], client: str) -> Path:
    """Write (or replace) this daemon's entry atomically with mode 0600; return its path."""
    directory = private_subdir("daemons")
    payload = {
        "version": VERSION, "pid": os.getpid(), "socket": str(socket), "token": token,
        "folders": [str(f.resolve()) for f in folders], "client": client,
    }
    target = directory / f"{name}.json"
    temp = directory / f".{name}.json.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(payload, out)
    os.replace(temp, target)
    return target


def touch(entry_path: Path) -> None:
    """Mark the daemon as just active (the entry's mtime). Never raises."""
    try:
        os.utime(entry_path)
    except OSError:
        pass


def remove(entry_path: Path, socket: Path | None = None) -> None:
    """Remove an entry (and its socket file). Never raises."""
    for path in (entry_path, socket):
        if path is not None:
            try:
                path.unlink()
            except OSError:
                pass


def parse_entry(path: Path) -> DaemonEntry:
    """Read and validate one entry; raises :class:`RefusedEntry` (or ``OSError``)."""
    info = path.lstat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise RefusedEntry(f"{path.name}: not private to this user")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise RefusedEntry(f"{path.name}: not JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise RefusedEntry(f"{path.name}: unknown format")
    pid, sock, token, folders = data.get("pid"), data.get("socket"), data.get("token"), data.get("folders")
    if not (isinstance(pid, int) and isinstance(sock, str) and isinstance(token, str) and token
            and isinstance(folders, list) and all(isinstance(f, str) for f in folders)):
        raise RefusedEntry(f"{path.name}: missing or malformed fields")
    sockets_dir = private_subdir("sockets").resolve()
    socket = Path(sock)
    if socket.resolve().parent != sockets_dir:
        raise RefusedEntry(f"{path.name}: its socket {sock} is outside {sockets_dir}")
    return DaemonEntry(
        path=path, pid=pid, socket=socket, token=token, folders=tuple(Path(f) for f in folders),
        client=str(data.get("client") or ""), last_active=info.st_mtime,
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def find_daemons(directory: Path, *, editor: str | None = None) -> tuple[list[DaemonEntry], list[str]]:
    """Live daemons serving ``directory``, most recently active first, and why others were refused.

    ``editor`` keeps only entries whose client name contains it (case-insensitive) or whose pid is
    it. Stale entries (process gone) are removed on the way.
    """
    try:
        entries_dir = private_subdir("daemons")
    except OSError as exc:
        return [], [str(exc)]
    found: list[DaemonEntry] = []
    refused: list[str] = []
    for path in sorted(entries_dir.glob("*.json")):
        try:
            entry = parse_entry(path)
        except (RefusedEntry, OSError) as exc:
            refused.append(str(exc))
            continue
        if not _alive(entry.pid) or not entry.socket.exists():
            remove(path, entry.socket)
            continue
        if editor and editor.lower() not in entry.client.lower() and editor != str(entry.pid):
            continue
        if entry.serves(directory):
            found.append(entry)
    found.sort(key=lambda e: e.last_active, reverse=True)
    return found, refused
