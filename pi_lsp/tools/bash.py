"""The ``bash`` tool: run a shell command under supervision (pi-behaviour.md 2.2, design.md section 7).

What the model sees follows the peer (Pi 0.73.1): the tail of the output (last 2000 lines or
50 KiB), the ``[Showing lines ...]`` notices, ``(no output)``, ``Command exited with code N``,
``Command timed out after {t} seconds``, ``Command aborted``. What pi-lsp adds (issue 3):

- the command runs as ``{shell} -c command`` in a new session (its own process group, no
  controlling terminal) with ``stdin`` on ``/dev/null``, registered in the session's
  :class:`~pi_lsp.tools.shell.processes.ProcessRegistry`;
- the call returns when the **shell** exits (a ``SubprocessProtocol``'s ``process_exited``; not
  ``Process.wait()``, which also waits for every pipe), followed by an idle drain: pipes held open
  by background children are read until they stay silent ``bash_idle_drain_seconds`` (at most
  ``bash_max_drain_seconds``); afterwards they are still drained, with the data dropped, so no
  child ever gets SIGPIPE from us;
- a default timeout (``bash_timeout_seconds``); on timeout or cancellation SIGTERM to the group,
  SIGKILL after ``bash_kill_grace_seconds``;
- a shell killed by a signal it was not sent by us is an error naming the signal;
- output decoded per stream, escapes stripped, memory bounded (:mod:`pi_lsp.tools.shell.output_buffer`).
"""

from __future__ import annotations

import asyncio
import fcntl
import math
import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from pi_lsp.agent.js_values import js_number_to_string
from pi_lsp.agent.tool import ToolContext, ToolError, ToolResult
from pi_lsp.tools.builtin_tool import BuiltinTool
from pi_lsp.tools.file_io.os_errors import os_error_code
from pi_lsp.tools.shell.output_buffer import OutputBuffer, OutputSnapshot
from pi_lsp.tools.shell.processes import ProcessRegistry
from pi_lsp.tools.text.truncate import DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, format_size
from pi_lsp.tools.shell.spawn_args import spawn_args
from pi_lsp.tools.shell.update_throttle import UpdateThrottle

DESCRIPTION = (
    "Execute a bash command in the current working directory. Returns stdout and stderr. Output is "
    f"truncated to last {DEFAULT_MAX_LINES} lines or {DEFAULT_MAX_BYTES // 1024}KB (whichever is hit "
    "first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds."
)
"""The peer's description, verbatim."""

MAX_TIMEOUT_SECONDS = 2_147_483.647
"""Largest accepted timeout (Pi 0.83: Node's 32-bit millisecond timer limit)."""

_KILL_WAIT_SECONDS = 2.0
_SESSION_VARIABLES = ("PI_SESSION_ID", "PI_SESSION_FILE", "PI_PROVIDER", "PI_MODEL", "PI_REASONING_LEVEL")


@dataclass(frozen=True)
class Launch:
    """How a before hook asks the bash tool to start a command (the policy, for commands it
    allowed without asking: :mod:`pi_lsp.policy.sandbox`). Set it with ``args.set_launch``.

    Attributes:
        prefix: put before the shell (a sandbox such as ``bwrap ... --``).
        env: added to the command's environment.
        argv: when set, the exact argument vector to run instead of letting the shell parse the
            command again: what was judged is what runs, even if a glob would match other files
            by now. ``argv[0]`` is the name the program sees.
        program: with ``argv``, the absolute path of the program to execute (``PATH`` is not
            searched again).
        stderr_to_null: with ``argv``, send stderr to ``/dev/null`` (the command's ``2>/dev/null``).
    """

    prefix: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    argv: tuple[str, ...] | None = None
    program: str | None = None
    stderr_to_null: bool = False

    def shell_argv(self, shell: str, command: str) -> list[str]:
        """The process's argument vector for ``{shell} -c command`` under this launch; with
        ``argv``: ``/bin/bash -c 'exec -a "$0" "$@"' argv[0] program argv[1:]...``."""
        if self.argv is None or self.program is None:
            return [*self.prefix, shell, "-c", command]
        script = 'exec -a "$0" "$@"' + (" 2>/dev/null" if self.stderr_to_null else "")
        return [*self.prefix, "/bin/bash", "-c", script, self.argv[0], self.program, *self.argv[1:]]


# The arguments ``{command, timeout?}``; ``timeout`` in seconds; an open object like the peer's
# schema. (No docstring: pydantic would put it into the schema models see as its description.)
class BashArgs(BaseModel):
    model_config = ConfigDict(extra="ignore", defer_build=True)

    command: str = Field(description="Bash command to execute")
    timeout: float | None = Field(
        default=None, description="Timeout in seconds (optional, no default timeout)"
    )
    _launch: Launch | None = PrivateAttr(default=None)

    def set_launch(self, launch: Launch | None) -> None:
        self._launch = launch

    @property
    def launch(self) -> Launch | None:
        return self._launch


def resolve_shell(configured: str | None) -> str:
    """The shell to run ``-c`` with: ``configured`` (must exist: Pi's ``Custom shell path not
    found: {path}``), else ``/bin/bash``, else ``bash`` on PATH, else ``sh`` (pi-behaviour.md 2.2)."""
    if configured:
        if not os.path.exists(configured):
            raise ToolError(f"Custom shell path not found: {configured}")
        return configured
    if os.path.exists("/bin/bash"):
        return "/bin/bash"
    return shutil.which("bash") or "sh"


def check_timeout(timeout: float | None) -> float | None:
    """Validate a timeout in seconds (Pi 0.83's rules; the issue's bad-input list).

    ``None`` passes. Not finite or <= 0: ``Invalid timeout: must be a finite number of seconds``;
    above :data:`MAX_TIMEOUT_SECONDS`: ``Invalid timeout: maximum is 2147483.647 seconds``.
    """
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise ToolError("Invalid timeout: must be a finite number of seconds")
    if not math.isfinite(timeout) or timeout <= 0:
        raise ToolError("Invalid timeout: must be a finite number of seconds")
    if timeout > MAX_TIMEOUT_SECONDS:
        raise ToolError(f"Invalid timeout: maximum is {MAX_TIMEOUT_SECONDS} seconds")
    return timeout


class _ShellProtocol(asyncio.SubprocessProtocol):
    """Feeds both pipes into an :class:`OutputBuffer`; reports exit and end of the pipes."""

    def __init__(self, loop: asyncio.AbstractEventLoop, buffer: OutputBuffer, on_data: Any) -> None:
        self.buffer = buffer
        self.on_data = on_data
        self.accepting = True
        self.exited: asyncio.Future[None] = loop.create_future()
        self.pipes_closed: asyncio.Future[None] = loop.create_future()
        self.last_data = time.monotonic()
        self.transport: asyncio.SubprocessTransport | None = None
        self.on_finished: Any = None
        self._open_pipes = {1, 2}

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        if not self.accepting:
            return  # after the result: drained and dropped (the peer drops late output too)
        self.last_data = time.monotonic()
        self.buffer.feed(fd, data if isinstance(data, bytes) else data.encode())
        self.on_data()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self._open_pipes.discard(fd)
        if not self._open_pipes and not self.pipes_closed.done():
            self.pipes_closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        # exited and both pipes closed: asyncio is done with the process
        if self.transport is not None:
            self.transport.close()
        if self.on_finished is not None:
            self.on_finished()


@dataclass
class _Outcome:
    status: str | None  # None: success; else "exit", "signal", "timeout", "aborted"
    code: int | None = None


_DRAINING: set[_ShellProtocol] = set()
"""Protocols of finished calls whose pipes are still held by background children."""


class BashTool(BuiltinTool):
    """The ``bash`` tool of one session (implements :class:`pi_lsp.agent.tool.Tool`).

    ``execute`` raises :class:`ToolError` for every failure the model should read: validation of
    ``timeout``, empty command, missing cwd, spawn failure, non-zero exit, a fatal signal, timeout
    and cancellation (the latter two after the process group was ended).
    """

    name = "bash"
    label = "bash"
    description = DESCRIPTION
    args_model = BashArgs

    async def execute(self, args: BashArgs, ctx: ToolContext) -> ToolResult:
        """Run ``args.command``; see the module docstring for the rules."""
        settings = self.env.settings
        timeout = check_timeout(args.timeout)
        if timeout is None:
            timeout = check_timeout(settings.bash_timeout_seconds)
        command = args.command
        if not isinstance(command, str) or not command.strip():
            raise ToolError("Invalid command: the command is empty. Nothing was run.")
        if ctx.signal.aborted:
            raise ToolError("Command aborted")
        cwd = Path(self.env.cwd)
        if not cwd.is_dir():
            raise ToolError(f"Working directory does not exist: {cwd}\nCannot execute bash commands.")
        shell = resolve_shell(settings.bash_shell)
        registry = self.env.processes
        buffer = OutputBuffer(Path(self.env.temp_dir), max_spill_bytes=settings.bash_max_spill_bytes)
        updates = UpdateThrottle(ctx, buffer, settings.bash_update_interval_seconds)
        ctx.update(ToolResult(content=[], details=None))
        loop = asyncio.get_running_loop()
        protocol = _ShellProtocol(loop, buffer, updates.data_arrived)
        base_env = {k: v for k, v in os.environ.items() if k not in _SESSION_VARIABLES}
        launch = args.launch if isinstance(args, BashArgs) else None
        if launch is not None:
            base_env.update(launch.env)
        spawn_env = registry.spawn_env(base_env) if registry is not None else base_env
        argv = launch.shell_argv(shell, command) if launch is not None else [shell, "-c", command]
        aborted_while_starting = False
        try:
            shell_args = spawn_args(argv[1:])  # a launch's prefix is only set for judged commands (no NUL)
            spawn = asyncio.ensure_future(loop.subprocess_exec(
                lambda: protocol, argv[0], *shell_args, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, cwd=str(cwd),
                env=spawn_env, start_new_session=True,
            ))
            try:
                transport, _ = await asyncio.shield(spawn)
            except asyncio.CancelledError:
                # aborted while the shell was starting (it may already be running its command):
                # let the start finish, then end its process group as any aborted call's, so no
                # child outlives the call and the output so far is in the result
                transport, _ = await spawn
                aborted_while_starting = True
        except OSError as exc:
            buffer.close()
            raise ToolError(f"spawn {shell} {os_error_code(exc) or exc.strerror}") from None
        except ToolError:
            buffer.close()
            raise
        pgid = transport.get_pid()
        _widen_pipes(transport)
        if registry is not None:
            registry.register(pgid)
            protocol.on_finished = lambda: registry.unregister(pgid)
        try:
            if aborted_while_starting:
                await self._end_group(protocol, pgid)
                outcome = _Outcome("aborted")
            else:
                outcome = await self._supervise(protocol, transport, pgid, timeout)
        finally:
            protocol.accepting = False
            updates.close()
            buffer.finish()
            if protocol.pipes_closed.done():
                if protocol.exited.done():
                    transport.close()
            else:
                _DRAINING.add(protocol)
                protocol.pipes_closed.add_done_callback(lambda _f: _DRAINING.discard(protocol))
        snapshot = buffer.snapshot()
        buffer.close()
        updates.final(snapshot)
        return self._result(outcome, snapshot, buffer, timeout)

    async def _supervise(
        self, protocol: _ShellProtocol, transport: Any, pgid: int, timeout: float | None
    ) -> _Outcome:
        """Wait for the shell (or the timeout, or cancellation), then drain the pipes."""
        settings = self.env.settings
        try:
            done, _ = await asyncio.wait({protocol.exited}, timeout=timeout)
        except asyncio.CancelledError:
            await self._end_group(protocol, pgid)
            return _Outcome("aborted")
        if not done:
            await self._end_group(protocol, pgid)
            return _Outcome("timeout")
        try:
            await self._drain(protocol, settings.bash_idle_drain_seconds)
        except asyncio.CancelledError:
            await self._end_group(protocol, pgid)  # background children of an aborted call go too
            return _Outcome("aborted")
        code = transport.get_returncode()
        if code is None or code == 0:
            return _Outcome(None, code)
        if code < 0:
            return _Outcome("signal", -code)
        return _Outcome("exit", code)

    async def _end_group(self, protocol: _ShellProtocol, pgid: int) -> None:
        """SIGTERM, grace, SIGKILL; then wait for the shell's exit and a short drain.

        Runs in its own task so a second cancellation cannot leave the group half-ended.
        """
        grace = self.env.settings.bash_kill_grace_seconds
        registry = self.env.processes or ProcessRegistry(kill_grace_seconds=grace)

        async def end() -> None:
            await registry.terminate_group(pgid, grace)
            await asyncio.wait({protocol.exited}, timeout=_KILL_WAIT_SECONDS)
            await self._drain(protocol, self.env.settings.bash_idle_drain_seconds)

        task = asyncio.ensure_future(end())
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            await task

    async def _drain(self, protocol: _ShellProtocol, idle: float) -> None:
        """After exit: read until the pipes close, ``idle`` seconds pass without data, or the
        drain cap is reached (Pi: 100 ms idle, re-armed per chunk)."""
        cap = self.env.settings.bash_max_drain_seconds
        start = time.monotonic()
        protocol.last_data = max(protocol.last_data, start)
        while not protocol.pipes_closed.done():
            now = time.monotonic()
            remaining = min(protocol.last_data + idle, start + cap) - now
            if remaining <= 0:
                return
            await asyncio.wait({protocol.pipes_closed}, timeout=remaining)

    def _result(
        self, outcome: _Outcome, snapshot: OutputSnapshot, buffer: OutputBuffer, timeout: float | None
    ) -> ToolResult:
        if outcome.status in ("timeout", "aborted"):
            text, _ = _format_output(snapshot, buffer, "")
            if outcome.status == "aborted":
                raise ToolError(_append_status(text, "Command aborted"))
            shown = js_number_to_string(timeout) if timeout is not None else "?"
            raise ToolError(_append_status(text, f"Command timed out after {shown} seconds"))
        text, details = _format_output(snapshot, buffer, "(no output)")
        if outcome.status == "exit":
            raise ToolError(_append_status(text, f"Command exited with code {outcome.code}"))
        if outcome.status == "signal":
            raise ToolError(_append_status(text, f"Command terminated by signal {_signal_name(outcome.code)}"))
        return ToolResult.text(text, details)


_PIPE_SIZE = 1 << 20
"""Bytes asked for each output pipe (Linux ``F_SETPIPE_SZ``): fewer, larger reads on big output."""


def _widen_pipes(transport: Any) -> None:
    """Grow both output pipes to :data:`_PIPE_SIZE` where the OS allows; silently keep them else."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    for fd in (1, 2):
        pipe = transport.get_pipe_transport(fd)
        handle = pipe.get_extra_info("pipe") if pipe is not None else None
        if handle is None:
            continue
        try:
            fcntl.fcntl(handle.fileno(), set_size, _PIPE_SIZE)
        except (OSError, ValueError):
            pass  # above pipe-max-size for an unprivileged user, or already closed: keep it


def _signal_name(number: int | None) -> str:
    try:
        return signal.Signals(number).name  # type: ignore[arg-type]
    except (ValueError, TypeError):
        return f"signal {number}"


def _append_status(text: str, status: str) -> str:
    return f"{text}\n\n{status}" if text else status


def _format_output(
    snapshot: OutputSnapshot, buffer: OutputBuffer, empty_text: str
) -> tuple[str, dict[str, Any] | None]:
    """The peer's ``formatOutput``: body (or ``empty_text``) plus the truncation notice."""
    truncation = snapshot.truncation
    text = snapshot.content or empty_text
    if not truncation.truncated:
        return text, None
    path = snapshot.full_output_path
    details = {"truncation": truncation.to_details(), "fullOutputPath": str(path) if path else None}
    full = "Full output"
    if buffer.spill_capped and buffer.max_spill_bytes is not None:  # the file stopped at the cap
        full = f"Full output (first {format_size(buffer.max_spill_bytes)})"
    end = truncation.total_lines
    start = end - truncation.output_lines + 1
    if truncation.last_line_partial:
        text += (
            f"\n\n[Showing last {format_size(truncation.output_bytes)} of line {end} "
            f"(line is {format_size(buffer.last_line_bytes)}). {full}: {path}]"
        )
    elif truncation.truncated_by == "lines":
        text += f"\n\n[Showing lines {start}-{end} of {truncation.total_lines}. {full}: {path}]"
    else:
        text += (
            f"\n\n[Showing lines {start}-{end} of {truncation.total_lines} "
            f"({format_size(buffer.max_bytes)} limit). {full}: {path}]"
        )
    return text, details
