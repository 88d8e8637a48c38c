"""``pi-lsp exec``: the headless tool pipeline on the filesystem, JSON Lines in and out (design.md section 5).

Usage: ``pi-lsp exec [--cwd DIR] [--tools a,b|all] [--approvals allow|deny]``.

Input (stdin), one JSON value per line, lines of any length (stdin is read in binary chunks):

- ``{"toolCall": {"id", "name", "arguments"}}`` or a bare ``{"id", "name", "arguments"}``: answered
  by one ToolResultMessage line ``{"role": "toolResult", "toolCallId", "toolName", "content",
  "details"?, "isError", "timestamp"}`` (``timestamp`` in integer epoch milliseconds);
- ``{"toolCalls": [...], "stopReason": ...}``: one batch (run as the calls of one assistant
  message), answered by one ``{"results": [...]}`` line in source order.

Lines run strictly one after another; only the calls of a batch run concurrently. Blank lines are
skipped; a byte order mark (U+FEFF) at the start of a line is ignored, as RFC 8259 section 8.1
allows (Windows tools write one at the start of a file). A line that is not UTF-8 JSON or not a call
is answered by an error result with ``"toolCallId": null`` and ``"toolName": ""``, and the next line
is served. A ``cwd`` key in a line is ignored (the shared peer cases carry ``"cwd": "__ROOT__"``):
every call runs in ``--cwd``. Each answer is flushed as soon as it is written, as compact JSON (no
spaces, like JavaScript's ``JSON.stringify``; non-ASCII characters written as UTF-8).

When stdout is a pipe whose reader goes away (``| head -1``), the running line is aborted and the
session ends with status 1, without waiting for that line to finish
(:mod:`~pi_lsp.exec.output_watch`). At end of input it finishes the running line, ends every process
group the tools started (it is a child subreaper on Linux, so daemonised grandchildren are ended
too), removes its temp folder (bash spill files) and exits 0. SIGINT/SIGTERM/SIGHUP abort the
running line (its calls still get their ``Operation aborted`` results), then the same clean-up, exit
status 130/143/129. At start it cleans what killed pi-lsp processes left
(:func:`~pi_lsp.tools.leftovers.clean_leftovers`).

``--tools`` picks the active tools (default: Pi's default set, ``read,bash,edit,write``; ``all`` =
every registered tool); a call of a registered but inactive tool gets Pi's ``Tool grep not found``
followed by the ``--tools`` value that would make it active. ``--approvals`` is the answer wherever
the policy (:mod:`pi_lsp.policy`, design.md section 8) would ask a user, since exec has no editor to
ask: ``allow`` (the default) or ``deny``. Deny rules and protected paths apply either way
(``edit``/``write`` of ``.env`` is refused); each decision goes to this module's logger (routine
allows at DEBUG, the rest at INFO; silent unless logging is configured).
This module imports no pygls, lsprotocol or httpx, so it starts fast.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, BinaryIO, Union

from pi_lsp.agent.eager import CANCELLED, RETURNED, WAITING, first_step, settled_state
from pi_lsp.agent.pipeline import ToolPipeline
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.exec.local_session import LocalToolSession, UnknownTools
from pi_lsp.exec.output_watch import watch_reader_gone
from pi_lsp.llm import json_text
from pi_lsp.llm.types import TextContent, ToolCall, ToolResultMessage, to_wire, to_wire_json, tool_call
from pi_lsp.policy.approvals import LogJournal
from pi_lsp.tools.leftovers import clean_leftovers
from pi_lsp.tools.shell.processes import become_child_subreaper

logger = logging.getLogger(__name__)

Answer = Union[ToolResultMessage, dict[str, Any]]
"""What answers one input line: a call's result message, or the wire dict of a batch or a bad line."""

COMPACT = (",", ":")
"""``json`` separators without spaces, as ``JSON.stringify`` writes."""

READ_CHUNK_BYTES = 1 << 16
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Signals that abort the running line and end the session cleanly (exit status 128 + signal)."""
NOT_A_CALL = (
    'Invalid input line: expected {"toolCall": {"id", "name", "arguments"}}, a bare tool call '
    '{"id", "name", "arguments"} or {"toolCalls": [...], "stopReason": ...}'
)


class BadLine(Exception):
    """An input line (or one element of a batch) that cannot be run; the text is the error result,
    which has ``"toolCallId": null`` and ``"toolName": ""`` (design.md section 5)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class LineReader:
    """Lines of a binary stream, read in chunks; no length limit.

    Where the event loop can watch the descriptor (a pipe, a socket, a terminal) the chunks are
    read in the loop itself, when it reports the descriptor readable: no thread hand-off per line
    (about 20 us of a small read's 250, issue 21). Where it cannot (a regular file or ``/dev/null``, which epoll
    refuses) a daemon thread reads them. The descriptor's blocking mode is left as it is (it may
    be shared with other processes); a read is only made when the loop says data is there.

    Every line a chunk completes (bytes, without its ``\\n``) goes to ``on_lines`` in one list, in
    the event loop's thread, as soon as the chunk is read; at end of input ``on_end()`` is called
    once. A final line without a newline counts. A read error counts as end of input.
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop, fd: int,
        on_lines: Callable[[list[bytes]], None], on_end: Callable[[], None],
    ) -> None:
        self._loop = loop
        self._fd = fd
        self._on_lines = on_lines
        self._on_end = on_end
        self._parts: list[bytes] = []
        self._watched = False
        try:
            loop.add_reader(fd, self._on_readable)
            self._watched = True
        except (OSError, ValueError, NotImplementedError):  # a regular file, a closed fd, no selector loop
            threading.Thread(target=self._pump, name="pi-lsp-exec-stdin", daemon=True).start()

    def _on_readable(self) -> None:
        try:
            chunk = os.read(self._fd, READ_CHUNK_BYTES)
        except BlockingIOError:  # a non-blocking descriptor another reader drained first
            return
        except OSError:
            chunk = b""
        if chunk:
            if lines := self._split(chunk):
                self._on_lines(lines)
            return
        self.close()
        if tail := self._tail():
            self._on_lines(tail)
        self._on_end()

    def _pump(self) -> None:
        try:
            while chunk := os.read(self._fd, READ_CHUNK_BYTES):
                if lines := self._split(chunk):
                    self._call(self._on_lines, lines)
        except OSError:
            pass
        if tail := self._tail():
            self._call(self._on_lines, tail)
        self._call(self._on_end)

    def _split(self, chunk: bytes) -> list[bytes]:
        """Every line ``chunk`` completes; its unfinished tail is kept for the next chunk."""
        lines = chunk.split(b"\n")
        tail = lines.pop()
        if lines and self._parts:
            self._parts.append(lines[0])
            lines[0] = b"".join(self._parts)
            self._parts = []
        if tail:
            self._parts.append(tail)
        return lines

    def _tail(self) -> list[bytes]:
        """The final line without a newline, if any (as a list for ``on_lines``)."""
        tail = [b"".join(self._parts)] if self._parts else []
        self._parts = []
        return tail

    def _call(self, callback: Callable[..., None], *args: Any) -> None:
        try:
            self._loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop closed: nobody is reading any more
            pass

    def close(self) -> None:
        """Stop watching the descriptor (a reading thread may keep blocking in ``read``; it is a
        daemon thread and its lines are no longer served). Idempotent."""
        if self._watched:
            self._watched = False
            self._loop.remove_reader(self._fd)


class LineServer:
    """Answers lines strictly one after another, in the callback that delivered them when it can.

    A line whose answer completes without waiting (a small read: the pipeline's eager path,
    :func:`~pi_lsp.agent.eager.first_step`) is answered and written in the same event-loop
    iteration that read it, without a task, a queue or another wake-up (issue 21); a line that has
    to wait runs as a task, and the lines after it wait for its answer. ``respond(line)`` makes
    the output object of a non-blank line; ``write(obj)`` writes it (an ``OSError`` there means
    nobody reads the answers any more: the session ends with status 1).

    :attr:`finished` is done with the exit status (0 or 1) once the input ended (:meth:`end`) or
    :meth:`stop` was called and the running line, if any, was answered; with the exception of a
    ``respond`` that raised (a bug: bad input gets an error result).
    """

    def __init__(
        self, loop: asyncio.AbstractEventLoop,
        respond: Callable[[bytes], Coroutine[Any, Any, Answer]], write: Callable[[Answer], None],
    ) -> None:
        self._respond = respond
        self._write = write
        self._lines: deque[bytes] = deque()
        self._running: asyncio.Future[Answer] | None = None
        self._closing = False
        self._serving = False  # in _serve: a nested call (from inside a line's first step) leaves it to the outer one
        self.finished: asyncio.Future[int] = loop.create_future()

    def add(self, lines: list[bytes]) -> None:
        """Queue input lines (without their newlines) and answer what can be answered now."""
        if not self._closing:
            self._lines.extend(lines)
            self._serve()

    def end(self) -> None:
        """The input ended: finish the queued lines, then :attr:`finished`."""
        self._closing = True
        self._serve()

    def stop(self) -> None:
        """Answer no more lines than the running one, then :attr:`finished`."""
        self._closing = True
        self._lines.clear()
        self._serve()

    def _serve(self) -> None:
        if self._serving or self._running is not None or self.finished.done():
            return
        self._serving = True
        try:
            lines = self._lines
            while lines:
                line = lines.popleft()
                if not line.strip():
                    continue
                state, outcome = first_step(self._respond(line))
                if state == WAITING:
                    self._running = outcome
                    outcome.add_done_callback(self._ran)
                    return
                if not self._deliver(state, outcome):
                    return
            if self._closing:
                self.finished.set_result(0)
        finally:
            self._serving = False

    def _ran(self, work: asyncio.Future[Answer]) -> None:
        self._running = None
        if self._deliver(*settled_state(work)):
            self._serve()

    def _deliver(self, state: int, outcome: Any) -> bool:
        """Write the answer of a finished line (``state, outcome`` as :func:`first_step` gives
        them); False (and :attr:`finished` set) if the session ends."""
        if self.finished.done():
            return False
        if state != RETURNED:  # a bug in respond (or its cancellation at shutdown)
            self.finished.set_exception(asyncio.CancelledError() if state == CANCELLED else outcome)
            return False
        try:
            self._write(outcome)
        except OSError as exc:  # the reader went away: nobody to answer
            print(f"pi-lsp exec: cannot write the answer ({exc}); stopping", file=sys.stderr)
            self.finished.set_result(1)
            return False
        except BaseException as exc:  # a bug in write: end the session with it, as a raise would
            self.finished.set_exception(exc)
            return False
        return True


def parse_call(value: Any) -> ToolCall:
    """A :class:`ToolCall` from ``{"id", "name", "arguments"?}``; raises :class:`BadLine`.

    ``id`` is a string (an integer is taken as its text), ``name`` a non-empty string; a missing
    ``arguments`` means ``{}``.
    """
    if not isinstance(value, dict):
        raise BadLine(NOT_A_CALL)
    raw_id = value.get("id")
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        raw_id = str(raw_id)
    name = value.get("name")
    if not isinstance(name, str) or not name:
        raise BadLine('Invalid tool call: "name" must be a non-empty string')
    if not isinstance(raw_id, str):
        raise BadLine('Invalid tool call: "id" must be a string')
    return tool_call(raw_id, name, value.get("arguments", {}))


def error_wire(bad: BadLine) -> dict[str, Any]:
    """The error result for a bad line, with the explicit ``"toolCallId": null`` (``to_wire`` drops None)."""
    message = ToolResultMessage(
        tool_call_id=None, tool_name="", content=[TextContent(text=bad.message)], details={}, is_error=True
    )
    wire = to_wire(message)
    return {"role": wire.pop("role"), "toolCallId": None, **wire}


async def answer(pipeline: ToolPipeline, line: bytes, signal: AbortSignal) -> Answer:
    """The output object for one non-blank input line (never raises for bad input): the call's
    :class:`ToolResultMessage`, or the wire dict of a batch or of a bad line."""
    try:
        text = line.decode("utf-8")
        if text.startswith("\ufeff"):
            text = text[1:]
    except UnicodeDecodeError as exc:
        return error_wire(BadLine(f"Invalid input line: not UTF-8 ({exc.reason} at byte {exc.start})"))
    try:
        value = json_text.loads(text)
    except ValueError as exc:
        return error_wire(BadLine(f"Invalid input line: not JSON ({exc})"))
    if isinstance(value, dict) and "toolCalls" in value:
        return await answer_batch(pipeline, value, signal)
    try:
        call = parse_call(value.get("toolCall") if isinstance(value, dict) and "toolCall" in value else value)
    except BadLine as bad:
        return error_wire(bad)
    return await pipeline.execute(call, signal=signal)


async def answer_batch(pipeline: ToolPipeline, value: dict[str, Any], signal: AbortSignal) -> dict[str, Any]:
    """``{"results": [...]}`` for a batch line; malformed elements get error results in place."""
    items = value["toolCalls"]
    stop_reason = value.get("stopReason")
    if not isinstance(items, list):
        return error_wire(BadLine('Invalid input line: "toolCalls" must be an array'))
    if stop_reason is not None and not isinstance(stop_reason, str):
        return error_wire(BadLine('Invalid input line: "stopReason" must be a string'))
    slots: list[ToolCall | BadLine] = []
    for item in items:
        try:
            slots.append(parse_call(item))
        except BadLine as bad:
            slots.append(bad)
    calls = [slot for slot in slots if isinstance(slot, ToolCall)]
    ran = iter(await pipeline.execute_batch(calls, stop_reason=stop_reason, signal=signal))  # type: ignore[arg-type]
    results = [error_wire(slot) if isinstance(slot, BadLine) else to_wire(next(ran)) for slot in slots]
    return {"results": results}


def encode_line(obj: Answer) -> bytes:
    """One answer as a JSON line (with its ``\\n``): compact, non-ASCII as UTF-8, always valid JSON
    (a non-finite number is ``null``, as ``JSON.stringify`` writes it).

    A :class:`ToolResultMessage` is serialised by pydantic straight to JSON
    (:func:`~pi_lsp.llm.types.to_wire_json`, issue 21); text pydantic cannot write as UTF-8 (a
    lone surrogate from a ``\\ud800`` escape in the input) and every dict go through
    :func:`pi_lsp.llm.json_text.dumps`, escaped to ASCII where UTF-8 cannot carry it.
    """
    if isinstance(obj, ToolResultMessage):
        try:
            return to_wire_json(obj) + b"\n"
        except ValueError:  # not writable as UTF-8
            obj = to_wire(obj)
    try:
        data = json_text.dumps(obj, ensure_ascii=False, separators=COMPACT).encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates from \\ud800-style escapes in the input
        data = json_text.dumps(obj, separators=COMPACT).encode("ascii")
    return data + b"\n"


def write_line(out: BinaryIO, obj: Answer) -> None:
    """Write :func:`encode_line` of ``obj`` to ``out`` and flush it."""
    out.write(encode_line(obj))
    out.flush()


async def serve(cwd: Path, tools_spec: str | None, approvals: str) -> int:
    """Serve stdin until it ends; returns the exit status.

    ``approvals`` (``allow``/``deny``) is the answer the policy hook gives where it would ask a
    user (design.md section 8).
    """
    loop = asyncio.get_running_loop()
    subreaper = become_child_subreaper()
    stopped: list[int] = []
    status = 0
    session = AbortSignal()

    def stop(signum: int) -> None:
        stopped.append(signum)
        session.abort(f"signal {signum}")

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop, signum)
    tools = LocalToolSession(
        cwd, tools_spec=tools_spec, approvals=approvals, journal=LogJournal(logger),
        reason=f"pi-lsp exec has no editor to ask (--approvals {approvals})",
    )
    pipeline = tools.pipeline
    out = sys.stdout.buffer
    server = LineServer(loop, lambda line: answer(pipeline, line, session), lambda obj: write_line(out, obj))
    reader: LineReader | None = None
    gone: list[bool] = []

    def output_gone() -> None:  # `| head -1` exited: abort the running line, as a signal would
        print("pi-lsp exec: nobody reads the answers any more (stdout closed); stopping", file=sys.stderr)
        gone.append(True)
        session.abort("stdout closed")

    unwatch = watch_reader_gone(loop, out.fileno(), output_gone)
    try:
        session.on_abort(server.stop)
        reader = LineReader(loop, sys.stdin.fileno(), server.add, server.end)
        status = await server.finished
    finally:
        if unwatch is not None:
            unwatch()
        if reader is not None:
            reader.close()
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)
        await tools.close(include_children=subreaper)
    return 128 + stopped[0] if stopped else 1 if gone else status


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``pi-lsp exec``; returns the exit status (2 for bad options)."""
    parser = argparse.ArgumentParser(
        prog="pi-lsp exec",
        description=(
            "Run tool calls from JSON Lines on stdin, on the filesystem; one answer line (a Pi "
            'ToolResultMessage) per input line, in order. A line is {"toolCall": {"id", "name", '
            '"arguments"}}, a bare {"id", "name", "arguments"} or {"toolCalls": [...], "stopReason": ...} '
            '(answered with {"results": [...]}).'
        ),
    )
    parser.add_argument("--cwd", default=os.getcwd(), help="working directory of every call (default: .)")
    parser.add_argument("--tools", default=None, help="active tools: a,b,c or all (default: read,bash,edit,write)")
    parser.add_argument("--approvals", choices=("allow", "deny"), default="allow", help="the answer where the policy would ask a user: outside the workspace, "
                        "commands not judged read-only (default: allow; protected paths are refused either way)")
    options = parser.parse_args(argv)
    cwd = Path(options.cwd).expanduser().absolute()
    if not cwd.is_dir():
        print(f"pi-lsp exec: --cwd {cwd} is not a directory", file=sys.stderr)
        return 2
    # Everything imported so far lives until exit: keep it out of every garbage collection,
    # including the full one at interpreter exit (about a fifth of a short run's CPU time).
    gc.freeze()
    clean_leftovers()
    try:
        return asyncio.run(serve(cwd, options.tools, options.approvals))
    except KeyboardInterrupt:  # Ctrl-C before the handlers were installed or after they were removed
        return 128 + signal.SIGINT
    except UnknownTools as exc:
        print(f"pi-lsp exec: {exc}", file=sys.stderr)
        return 2
