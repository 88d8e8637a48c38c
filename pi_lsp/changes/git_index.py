"""Which workspace files git already holds, byte for byte: the bash snapshot need not copy them.

A file tracked by git whose stat matches its index entry is the index's blob: its content before a
command can be read back from the repository (``git cat-file``) instead of being copied into the
blob store when the snapshot is taken. :meth:`GitIndex.clean_blobs` lists such files for one
workspace folder: ``absolute path -> (stat key, blob id)``. A file counts only when all hold (else it
is copied as before, so nothing becomes less restorable):

- a regular file (mode 100644/100755) at stage 0 (no merge conflict);
- the index's size, mtime (ns) and inode (git keeps their low 32 bits) equal the file's stat, and the
  entry is not "racily clean" (mtime not older than the index file itself: git would re-read it);
- no ``filter`` / ``ident`` / ``working-tree-encoding`` attribute applies, and where line endings
  may be converted (``text`` / ``eol`` attributes, ``core.autocrlf``) the blob's size equals the
  file's: the blob is the file's bytes, not a converted form (CRLF, ident, LFS pointers, ...).

Only the repository that holds the folder is asked, with a cleaned environment (no inherited
``GIT_*`` variables) and the config-driven programs off (``core.fsmonitor``, hooks, pager, lazy
fetches of a partial clone); it never writes the index (``GIT_OPTIONAL_LOCKS=0``). Any failure (no
git, not a repository, a timeout) gives an empty result. The parsed index is cached per folder until
the index file's stat changes. :meth:`GitIndex.read_blobs` reads blobs back (``git cat-file --batch``).
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from pathlib import Path

logger = logging.getLogger(__name__)

StatKey = tuple[int, int, int]
"""(size in bytes, mtime in ns, inode), as :func:`pi_lsp.changes.workspace_scan.stat_walk` gives."""

SAFE_CONFIG = (
    "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-c", "core.hooksPath=/dev/null",
    "-c", "core.pager=cat",
)
"""Config overrides on every git call: no fsmonitor daemon, hook or pager runs on our behalf."""

LOW32 = 0xFFFFFFFF

CONVERTING = ("filter", "ident", "working-tree-encoding")
"""Attributes under which a file's bytes are not its blob's."""

EOL = ("text", "eol")
"""Attributes under which line endings may be converted (checked by size)."""


def git_env() -> dict[str, str]:
    """The environment of our git calls: the daemon's without ``GIT_*`` variables (so no
    ``GIT_DIR`` points elsewhere), no optional index writes, no prompts, no lazy fetches."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", GIT_NO_LAZY_FETCH="1", LC_ALL="C")
    return env


_ENTRY = re.compile(
    rb"([0-7]+) ([0-9a-f]+) ([0-3])\t([^\0]*)\0"  # mode, blob id, stage, path (-z: no quoting)
    rb"[^\n]*\n"  # ctime
    rb"\s*mtime: (\d+):(\d+)\n"
    rb"[^\n]*\bino: (\d+)\n"
    rb"[^\n]*\n"  # uid, gid
    rb"\s*size: (\d+)[^\n]*\n"
)


def parse_ls_files_debug(output: bytes) -> list[tuple[str, str, int, str, StatKey, int]]:
    """Entries of ``git ls-files -s --debug -z``: ``(mode, blob id, stage, path, (size, mtime_ns,
    ino), mtime seconds)``; the path is relative to the folder git ran in. Each entry is its
    ``-z`` line and five debug lines (``ctime``, ``mtime``, ``dev``/``ino``, ``uid``/``gid``,
    ``size``/``flags``); malformed entries are skipped."""
    return [
        (mode.decode(), blob.decode(), int(stage), os.fsdecode(path),
         (int(size), int(seconds) * 1_000_000_000 + int(nanos), int(ino)), int(seconds))
        for mode, blob, stage, path, seconds, nanos, ino, size in _ENTRY.findall(output)
    ]


class GitIndex:
    """Clean tracked files per workspace folder, from git (see the module docstring).

    ``timeout`` is the limit of each git call, in seconds.
    """

    def __init__(self, *, git: str = "git", timeout: float = 10.0) -> None:
        self.git = git
        self.timeout = timeout
        self._cache: dict[str, tuple[tuple[int, int, int], dict[str, tuple[StatKey, str]]]] = {}
        self._git_dirs: dict[str, str] = {}

    def _run(self, folder: str, args: list[str], data: bytes | None = None) -> bytes | None:
        try:
            done = subprocess.run(
                [self.git, "--no-pager", *SAFE_CONFIG, "-C", folder, *args], input=data,
                capture_output=True, env=git_env(), timeout=self.timeout, check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            logger.debug("git %s in %s: %s", args[0], folder, exc)
            return None
        return done.stdout if done.returncode == 0 else None

    def _index_file(self, folder: str) -> Path | None:
        known = self._git_dirs.get(folder)
        if known is not None and os.path.isdir(os.path.dirname(known)):
            return Path(known)
        out = self._run(folder, ["rev-parse", "--path-format=absolute", "--git-path", "index"])
        if not out:
            return None
        self._git_dirs[folder] = os.fsdecode(out.rstrip(b"\n"))
        return Path(self._git_dirs[folder])

    def clean_blobs(self, folder: Path) -> dict[str, tuple[StatKey, str]]:
        """Tracked files under ``folder`` whose content is their index blob, as their stat was
        when the index was read: ``absolute path -> ((size, mtime_ns, ino & 0xFFFFFFFF), blob id)``.
        Compare a file's stat with :func:`matches` before trusting an entry."""
        folder_text = str(folder)
        index = self._index_file(folder_text)
        if index is None:
            return {}
        try:
            info = index.stat()
        except OSError:
            return {}
        index_key = (info.st_size, info.st_mtime_ns, info.st_ino)
        cached = self._cache.get(folder_text)
        if cached is not None and cached[0] == index_key:
            return cached[1]
        result = self._read_index(folder_text, info.st_mtime_ns // 1_000_000_000)
        if result is None:
            return {}  # git failed (a timeout?): asked again next time
        self._cache[folder_text] = (index_key, result)
        return result

    def _read_index(self, folder: str, index_seconds: int) -> dict[str, tuple[StatKey, str]] | None:
        listing = self._run(folder, ["ls-files", "-s", "--debug", "-z"])
        if listing is None:
            return None
        candidates: dict[str, tuple[StatKey, str]] = {}
        for mode, blob, stage, rel, key, seconds in parse_ls_files_debug(listing):
            if stage == 0 and mode in ("100644", "100755") and seconds < index_seconds:
                candidates[rel] = (key, blob)
        if not candidates:
            return {}
        attributes = self._attributes(folder, list(candidates))
        if attributes is None:
            return None
        converted, eol_sensitive = attributes
        if self._autocrlf(folder):
            eol_sensitive = set(candidates)
        # end-of-line conversion changes the size unless it changed nothing: compare blob sizes
        sizes = self._blob_sizes(folder, {candidates[rel][1] for rel in eol_sensitive - converted})
        return {
            os.path.join(folder, rel): (key, blob)
            for rel, (key, blob) in candidates.items()
            if rel not in converted and (rel not in eol_sensitive or sizes.get(blob) == key[0])
        }

    def _autocrlf(self, folder: str) -> bool:
        out = self._run(folder, ["config", "--get", "core.autocrlf"])
        return out is not None and out.strip().lower() not in (b"", b"false", b"0", b"no", b"off")

    def _blob_sizes(self, folder: str, blobs: set[str]) -> dict[str, int]:
        out = self._run(folder, ["cat-file", "--batch-check"], "".join(b + "\n" for b in blobs).encode())
        sizes: dict[str, int] = {}
        for line in (out or b"").splitlines():
            parts = line.split(b" ")
            if len(parts) == 3 and parts[1] == b"blob":
                sizes[parts[0].decode()] = int(parts[2])
        return sizes

    def _attributes(self, folder: str, paths: list[str]) -> tuple[set[str], set[str]] | None:
        """``(converted, eol)``: paths with a ``filter``, ``ident`` or ``working-tree-encoding``
        attribute (their blob is not their bytes), and paths with ``text`` or ``eol`` set (their
        line endings may be converted); ``None`` when git could not say."""
        out = self._run(folder, ["check-attr", "-z", "--stdin", *CONVERTING, *EOL],
                        b"".join(os.fsencode(p) + b"\0" for p in paths))
        if out is None:
            return None
        fields = out.split(b"\0")
        converted: set[str] = set()
        eol: set[str] = set()
        for i in range(0, len(fields) - 2, 3):
            name, value = fields[i + 1].decode(), fields[i + 2]
            if value in (b"unspecified", b"unset"):
                continue
            (converted if name in CONVERTING else eol).add(os.fsdecode(fields[i]))
        return converted, eol

    def read_blobs(self, folder: Path, blobs: list[str]) -> dict[str, bytes]:
        """The content of each blob id found in the repository holding ``folder`` (missing ones are
        left out), read with one ``git cat-file --batch``."""
        if not blobs:
            return {}
        out = self._run(str(folder), ["cat-file", "--batch"], "".join(b + "\n" for b in blobs).encode())
        found: dict[str, bytes] = {}
        position = 0
        while out is not None and position < len(out):
            newline = out.find(b"\n", position)
            if newline < 0:
                break
            parts = out[position:newline].split(b" ")
            position = newline + 1
            if len(parts) != 3:
                continue  # "<id> missing"
            size = int(parts[2])
            found[parts[0].decode()] = out[position:position + size]
            position += size + 1
        return found


def matches(stat_key: StatKey, index_key: StatKey) -> bool:
    """Whether a file's stat ``(size, mtime_ns, ino)`` equals its index entry's (git stores the
    low 32 bits of size, seconds and inode)."""
    return (
        stat_key[0] == index_key[0]
        and stat_key[1] == index_key[1]
        and (stat_key[2] & LOW32) == (index_key[2] & LOW32)
    )
