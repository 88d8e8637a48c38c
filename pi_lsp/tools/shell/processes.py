"""Supervision of every process the tools start: the :class:`ProcessRegistry` (design.md section 5,
"Lifecycle"; issue 3, "Process lifecycle").

Each bash call runs its shell as the leader of a new process group (``start_new_session``) and
registers that group here; the group is unregistered when the shell exited and its pipes closed.
At session end :meth:`ProcessRegistry.end_all` sends SIGTERM, waits ``kill_grace_seconds``, then
sends SIGKILL to:

- every registered group (``killpg``);
- every process that carries this registry's *tag*: the environment variable
  :data:`TAG_VARIABLE` set to the registry's token in :meth:`ProcessRegistry.spawn_env`. Children
  inherit it, so daemonised grandchildren (double fork plus ``setsid``, a new group) are found by
  scanning ``/proc/*/environ`` even when they left the group;
- with ``include_children=True`` and only while this process is a child subreaper (the daemon,
  ``pi-lsp exec``): every live child of this process, which after :func:`become_child_subreaper`
  includes orphans adopted from the tools' process trees, even ones that cleared their environment.

Adopted orphans are reaped here (``waitpid`` on their pid only; never ``waitpid(-1)``, which would
steal exit statuses from asyncio's child watcher).

Leaving costs nothing when the registry never started a process (no ``/proc`` access at all). In a
child subreaper the processes considered are this process's descendants, walked through
``/proc/PID/task/TID/children`` (only the tools' own process trees are read); elsewhere, and on
kernels without that file, every process in ``/proc`` is scanned (issue 12: that scan cost 15 ms with
82 processes and 109 ms with 1,079, twice per exit).

Liveness is read from ``/proc``: a zombie (state ``Z``) counts as gone. Linux only for the subreaper
and the scans; elsewhere they degrade to registered groups alone.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import secrets
import signal
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

log = logging.getLogger(__name__)

TAG_VARIABLE = "PI_LSP_PROCESS_TAG"
"""Environment variable that marks every process started through a registry."""

PR_SET_CHILD_SUBREAPER = 36
"""``prctl`` option numbers (linux/prctl.h)."""
PR_GET_CHILD_SUBREAPER = 37

_POLL_SECONDS = 0.02
_PROC = Path("/proc")


@functools.lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL | None:
    """The C library, for ``prctl``; ``None`` off Linux or when it cannot be loaded.

    glibc's soname is tried first: ``ctypes.util.find_library`` runs ``ldconfig -p`` in a
    subprocess, which the daemon would pay before its first reply (issue 21); it is the fallback
    (musl and the like)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        pass
    import ctypes.util

    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


def is_child_subreaper() -> bool:
    """True when this process is a child subreaper (``prctl(PR_GET_CHILD_SUBREAPER)``); False
    elsewhere or when it cannot be asked."""
    libc = _libc()
    if libc is None:
        return False
    import ctypes

    flag = ctypes.c_int(0)
    try:
        result = libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
    except AttributeError:
        return False
    return result == 0 and flag.value != 0


def become_child_subreaper() -> bool:
    """Make this process a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER, 1)``, Linux >= 3.4).

    Orphaned descendants (a daemonised grandchild of a bash call) are then re-parented to this
    process instead of init, so :meth:`ProcessRegistry.end_all` can find, kill and reap them.
    Called once at start-up by the daemon and by ``pi-lsp exec``. Returns ``True`` on success,
    ``False`` where unsupported (not Linux, no libc, the call failed); never raises.
    """
    libc = _libc()
    if libc is None:
        return False
    import ctypes

    try:
        result = libc.prctl(PR_SET_CHILD_SUBREAPER, ctypes.c_ulong(1), 0, 0, 0)
    except AttributeError:
        return False
    if result != 0:
        log.warning("prctl(PR_SET_CHILD_SUBREAPER) failed: errno %d", ctypes.get_errno())
        return False
    return True


@dataclass(frozen=True)
class ProcInfo:
    """One line of ``/proc/PID/stat``: ``state`` is the one-letter state (``Z`` = zombie)."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str


def proc_info(pid: int) -> ProcInfo | None:
    """Read ``/proc/PID/stat``; ``None`` when the process is gone or ``/proc`` is missing."""
    try:
        raw = (_PROC / str(pid) / "stat").read_bytes()
    except OSError:
        return None
    # comm (field 2) is in parentheses and may hold spaces and parentheses: split after the last ')'.
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return ProcInfo(pid, int(fields[1]), int(fields[2]), int(fields[3]), fields[0].decode())
    except (IndexError, ValueError):
        return None


def iter_processes() -> Iterator[ProcInfo]:
    """Every process visible in ``/proc`` (racy by nature: entries may vanish while scanning)."""
    try:
        names = os.listdir(_PROC)
    except OSError:
        return
    for name in names:
        if name.isdigit():
            info = proc_info(int(name))
            if info is not None:
                yield info


@functools.lru_cache(maxsize=1)
def _children_file_supported() -> bool:
    """True when the kernel has ``/proc/PID/task/TID/children`` (``CONFIG_PROC_CHILDREN``)."""
    return (_PROC / "self" / "task" / str(threading.get_native_id()) / "children").exists()


def _children_of(pid: int) -> list[int]:
    """Direct children of ``pid`` (from every thread's ``children`` file); ``[]`` once it is gone."""
    base = _PROC / str(pid) / "task"
    try:
        tasks = os.listdir(base)
    except OSError:
        return []
    kids: list[int] = []
    for tid in tasks:
        try:
            kids.extend(int(k) for k in (base / tid / "children").read_bytes().split())
        except (OSError, ValueError):
            continue
    return kids


def reap_adopted_zombies() -> int:
    """``waitpid`` the zombie children this process adopted as a child subreaper; returns how many.

    Without this an auto-allowed command leaves one zombie per call until the session ends:
    ``bwrap --unshare-pid`` runs the command under a process of its own, which outlives the
    ``bwrap`` process the tool started by a moment, so it is re-parented to us. A zombie child is
    taken only when it can be no process anyone here started and waits for: a process pi-lsp
    starts is either a group leader (``start_new_session``: pid = pgid; asyncio reaps the shells)
    or stays in pi-lsp's own group (``subprocess.run`` of git and the sandbox probe), so a zombie
    child in *another* group whose leader it is not was adopted (never ``waitpid(-1)``, which
    would steal exit statuses from asyncio's child watcher). Linux with
    ``/proc/PID/task/TID/children``; elsewhere 0.
    """
    if not _children_file_supported():
        return 0
    me, my_group, reaped = os.getpid(), os.getpgrp(), 0
    for pid in _children_of(me):
        info = proc_info(pid)
        if info is None or info.state != "Z" or info.ppid != me or info.pgid in (pid, my_group):
            continue
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        reaped += 1
    return reaped


def descendants(pid: int) -> list[ProcInfo] | None:
    """Every live-or-zombie descendant of ``pid`` (children, their children ...), read from
    ``/proc/PID/task/TID/children``: only the subtree is visited, not every process of the machine.

    ``None`` when the kernel lacks the ``children`` file (then a full scan is the only way).
    Racy by nature, like every ``/proc`` walk: a process forking meanwhile may be missed, which is
    why :meth:`ProcessRegistry.end_all` looks twice.
    """
    if not _children_file_supported():
        return None
    found: list[ProcInfo] = []
    seen = {pid}
    stack = [pid]
    while stack:
        for kid in _children_of(stack.pop()):
            if kid in seen:
                continue
            seen.add(kid)
            info = proc_info(kid)
            if info is not None:
                found.append(info)
                stack.append(kid)
    return found


def is_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    info = proc_info(pid)
    if info is None:
        if not _PROC.is_dir():  # no /proc: fall back to a signal probe (zombies count as alive)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return False
            except PermissionError:
                return True
            return True
        return False
    return info.state != "Z"


def group_members(pgid: int, processes: list[ProcInfo] | None = None) -> list[int]:
    """Live (non-zombie) pids whose process group is ``pgid``, among ``processes`` (default: every
    process in ``/proc``)."""
    pool = iter_processes() if processes is None else processes
    return [p.pid for p in pool if p.pgid == pgid and p.state != "Z"]


def _has_tag(pid: int, marker: bytes) -> bool:
    try:
        data = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    return data.startswith(marker) or (b"\0" + marker) in data


def _signal_pid(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def end_tagged_processes(tokens: list[str], grace: float = 0.5) -> list[int]:
    """End every process (not this one) whose environment carries one of the registry tags
    ``tokens`` (sessions that were killed: their registries cannot end them any more): SIGTERM,
    up to ``grace`` seconds, SIGKILL. One scan of ``/proc``. Returns the pids signalled."""
    markers = [f"{TAG_VARIABLE}={token}\0".encode() for token in tokens]
    me = os.getpid()
    pids = [
        p.pid for p in iter_processes()
        if p.pid != me and p.state != "Z" and any(_has_tag(p.pid, marker) for marker in markers)
    ]
    for sig in (signal.SIGTERM, signal.SIGCONT):
        for pid in pids:
            _signal_pid(pid, sig)
    deadline = time.monotonic() + grace
    while any(is_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)
    for pid in pids:
        if is_alive(pid):
            _signal_pid(pid, signal.SIGKILL)
    return pids


class ProcessRegistry:
    """Every process group started by the tools of one session, and their end.

    Args:
        kill_grace_seconds: seconds between SIGTERM and SIGKILL in :meth:`end_all` and
            :meth:`terminate_group` (the session's ``bash_kill_grace_seconds``).
        token: the tag value; random (16 hex digits) by default.

    Thread-safety: use from one event loop thread; :meth:`end_all_blocking` may also be called
    from an ``atexit`` handler once that loop stopped.
    """

    def __init__(self, *, kill_grace_seconds: float = 2.0, token: str | None = None) -> None:
        self.kill_grace_seconds = kill_grace_seconds
        self.token = token or secrets.token_hex(8)
        self._groups: set[int] = set()
        self._seen: set[int] = set()  # non-leader pids met in our groups or tags: reap candidates
        self._started = False
        self._marker = f"{TAG_VARIABLE}={self.token}\0".encode()

    # -- registration ---------------------------------------------------------------------------

    def spawn_env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment for a new process: ``base`` (default ``os.environ``) plus the tag."""
        self._started = True
        env = dict(os.environ if base is None else base)
        env[TAG_VARIABLE] = self.token
        return env

    def register(self, pgid: int) -> None:
        """Track process group ``pgid`` (the pid of a leader started with ``start_new_session``);
        zombies adopted from earlier calls are reaped (:func:`reap_adopted_zombies`)."""
        self._started = True
        self._groups.add(pgid)
        reap_adopted_zombies()

    @property
    def started(self) -> bool:
        """True once a process was started through this registry (:meth:`spawn_env` or
        :meth:`register` was called); until then ending the session touches no process."""
        return self._started

    def _scope(self) -> list[ProcInfo] | None:
        """The processes worth looking at: this process's descendants while it is a child
        subreaper (every process the tools started stays in that subtree), else ``None`` (scan
        all of ``/proc``)."""
        if not is_child_subreaper():
            return None
        return descendants(os.getpid())

    def unregister(self, pgid: int) -> None:
        """Stop tracking ``pgid`` (its leader exited and its pipes closed); unknown ids are ignored.
        Zombies the call left to us are reaped (:func:`reap_adopted_zombies`)."""
        self._groups.discard(pgid)
        reap_adopted_zombies()

    @property
    def groups(self) -> frozenset[int]:
        """The process groups tracked now."""
        return frozenset(self._groups)

    def tagged_pids(self, processes: list[ProcInfo] | None = None) -> list[int]:
        """Live pids (other than this process) whose environment carries this registry's tag,
        among ``processes`` (default: every process in ``/proc``)."""
        me = os.getpid()
        pool = iter_processes() if processes is None else processes
        return [p.pid for p in pool if p.pid != me and p.state != "Z" and _has_tag(p.pid, self._marker)]

    # -- ending one group -----------------------------------------------------------------------

    async def terminate_group(self, pgid: int, grace: float | None = None) -> bool:
        """SIGTERM the group ``pgid``, SIGKILL it after ``grace`` seconds if anyone is left.

        Returns when no live member is left (or shortly after SIGKILL: a process stuck in
        uninterruptible sleep cannot be waited for). Returns ``True`` when SIGKILL was needed.
        Adopted members that became our zombies are reaped.
        """
        grace = self.kill_grace_seconds if grace is None else grace
        if pgid == os.getpgrp():
            return False  # never signal our own group
        self._note(group_members(pgid, self._scope()), leader=pgid)
        _signal_group(pgid, signal.SIGTERM)
        _signal_group(pgid, signal.SIGCONT)  # a stopped process only sees SIGTERM once continued
        deadline = time.monotonic() + grace
        while self._group_alive(pgid) and time.monotonic() < deadline:
            await asyncio.sleep(_POLL_SECONDS)
        killed = False
        if self._group_alive(pgid):
            killed = True
            _signal_group(pgid, signal.SIGKILL)
            end = time.monotonic() + 1.0
            while self._group_alive(pgid) and time.monotonic() < end:
                await asyncio.sleep(_POLL_SECONDS)
        self._reap_adopted()
        return killed

    def _note(self, pids: list[int] | set[int], leader: int | None = None) -> None:
        """Remember pids that may become our zombies (never a shell: asyncio reaps those)."""
        self._seen.update(p for p in pids if p != leader and p not in self._groups)

    def _group_alive(self, pgid: int) -> bool:
        members = group_members(pgid, self._scope())
        self._note(members, leader=pgid)
        self._reap_adopted()
        return bool(members)

    # -- ending everything ----------------------------------------------------------------------

    def _targets(self, include_children: bool) -> tuple[set[int], set[int]]:
        if not self._started:
            return set(), set()  # nothing was ever started: nothing to look for
        groups = set(self._groups) - {os.getpgrp()}  # never our own group
        scope = self._scope()
        if scope is not None and include_children:
            # a subreaper's subtree holds every process its tools started, tagged or not
            pids = {p.pid for p in scope if p.state != "Z"}
        else:
            pids = set(self.tagged_pids(scope))
        pids.discard(os.getpid())
        return groups, pids

    def _signal_all(self, groups: set[int], pids: set[int], sig: int) -> None:
        my_group = os.getpgrp()
        for pgid in groups:
            if pgid != my_group:
                _signal_group(pgid, sig)
        for pid in pids:
            _signal_pid(pid, sig)
            info = proc_info(pid)
            if info is not None and info.pgid == pid and pid != my_group:
                _signal_group(pid, sig)  # a daemon that made itself a group leader: its group too

    def _survivors(self, groups: set[int], pids: set[int]) -> list[int]:
        alive = [pid for pid in pids if is_alive(pid)]
        scope = self._scope() if groups else None
        for pgid in groups:
            members = group_members(pgid, scope)
            self._note(members, leader=pgid)
            alive.extend(members)
        return alive

    def _reap_adopted(self) -> None:
        """``waitpid`` the remembered pids that are now zombie children of ours.

        Only pids met in our groups or carrying our tag are candidates (adopted through the
        subreaper); shells and other children belong to asyncio or their owners.
        """
        me = os.getpid()
        for pid in list(self._seen):
            info = proc_info(pid)
            if info is None:
                self._seen.discard(pid)
            elif info.state == "Z" and info.ppid == me and pid not in self._groups:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
                self._seen.discard(pid)

    def _begin_end_all(self, include_children: bool) -> tuple[set[int], set[int]]:
        groups, pids = self._targets(include_children)
        self._note(pids - groups)
        self._signal_all(groups, pids, signal.SIGTERM)
        self._signal_all(groups, pids, signal.SIGCONT)
        return groups, pids

    def _finish_end_all(self, groups: set[int], pids: set[int], include_children: bool) -> None:
        # Processes may have forked during the grace period: look again before SIGKILL.
        more_groups, more_pids = self._targets(include_children)
        groups |= more_groups
        pids |= more_pids
        self._note(more_pids - groups)
        self._signal_all(groups, pids, signal.SIGKILL)

    async def end_all(self, grace: float | None = None, *, include_children: bool = False) -> None:
        """End every tracked group and tagged process: SIGTERM, ``grace`` seconds, SIGKILL.

        ``include_children``: also end every child of this process, but only while this process
        is a child subreaper (the daemon and ``pi-lsp exec``, whose children all belong to the
        tools); elsewhere (a test runner hosting a session) it changes nothing, so unrelated
        children are never touched. Returns once nothing is left
        alive (bounded: at most ``grace`` + about 1 s); never raises for processes already gone.
        """
        grace = self.kill_grace_seconds if grace is None else grace
        groups, pids = self._begin_end_all(include_children)
        deadline = time.monotonic() + grace
        while self._survivors(groups, pids) and time.monotonic() < deadline:
            self._reap_adopted()
            await asyncio.sleep(_POLL_SECONDS)
        self._finish_end_all(groups, pids, include_children)
        end = time.monotonic() + 1.0
        while self._survivors(groups, pids) and time.monotonic() < end:
            self._reap_adopted()
            await asyncio.sleep(_POLL_SECONDS)
        self._reap_adopted()
        self._groups.clear()

    def end_all_blocking(self, grace: float | None = None, *, include_children: bool = False) -> None:
        """:meth:`end_all` without an event loop (``atexit``, signal handlers); same guarantees."""
        grace = self.kill_grace_seconds if grace is None else grace
        groups, pids = self._begin_end_all(include_children)
        deadline = time.monotonic() + grace
        while self._survivors(groups, pids) and time.monotonic() < deadline:
            self._reap_adopted()
            time.sleep(_POLL_SECONDS)
        self._finish_end_all(groups, pids, include_children)
        end = time.monotonic() + 1.0
        while self._survivors(groups, pids) and time.monotonic() < end:
            self._reap_adopted()
            time.sleep(_POLL_SECONDS)
        self._reap_adopted()
        self._groups.clear()
