"""``pi-lsp`` / ``pi-lsp --stdio`` / ``python -m pi_lsp``: the daemon on stdio (design.md 5).

The protocol owns the process's stdin and stdout alone: both are duplicated for the transport, then
fd 0 is pointed at ``/dev/null`` and fd 1 at stderr, so neither a stray ``print`` nor a child
process can corrupt the stream or steal input. Logs go to the client as ``window/logMessage`` while
one is connected (:mod:`pi_lsp.daemon.client_log`), and to ``--log-file`` when given; stderr gets
WARNING and above while no client is connected (everything with ``-v``), since editors show stderr
as errors. pygls logs at WARNING unless ``-v``.

The transport reads LSP base-protocol frames in a daemon thread (a blocked read never keeps the
process alive) and answers what pygls would drop, per JSON-RPC 2.0: a body that is not JSON gets
ParseError (-32700, id null); a message that is not a request, notification or response gets
InvalidRequest (-32600); a request whose params do not fit the LSP type gets InvalidParams
(-32602). The daemon keeps running after each. It stops on ``exit``, when stdin closes, or at
SIGTERM, SIGHUP or SIGINT (editors stop servers with SIGTERM; Ctrl-C in a terminal), then ends the
session (process groups, temp folder) and exits (a signal gives status 128 + its number, and no
traceback). Before its first session (right after the first ``initialize`` reply) it cleans what
killed pi-lsp processes left (:func:`~pi_lsp.tools.leftovers.clean_leftovers`).

A ``Content-Length`` header whose value is not a non-negative decimal integer, or is over
:data:`MAX_FRAME_BYTES`, or a frame without ``Content-Length`` (a body sent without headers, a
header section that lacks it) leaves no way to find the next frame: the daemon answers ParseError
(-32700, id null), logs it, ends the session and exits with code 1.

The daemon's own frames go out through :mod:`pi_lsp.daemon.frame_writer`: frames that follow
one another in a step of the event loop share a write.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import signal
import sys
import threading
from typing import Any, BinaryIO

import cattrs
from pygls.exceptions import JsonRpcException

from pi_lsp import __version__
from pi_lsp.daemon.frame_writer import CoalescingWriter
from pi_lsp.llm import json_text
from pi_lsp.long_lived import long_lived_objects

logger = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

MAX_FRAME_BYTES = 1 << 30
"""The largest frame body the daemon reads, in bytes (1 GiB); a longer ``Content-Length`` ends the session."""

MAX_HEADER_LINE_BYTES = 8192
"""The longest header line the daemon reads, in bytes; a longer one ends the session."""

_CONTENT_LENGTH = re.compile(rb"content-length:(.*)$", re.IGNORECASE)
_HEADER = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+:")  # an RFC 7230 token, then ':'
_HEADER_START = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z \t\r\n-]")  # a token or a blank line


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
"""Signals that end the daemon cleanly: abort tool calls, end process groups, remove the temp folder."""


_WAKE = object()
"""Queued when ``exit`` is requested, so that the frame loop notices without a frame."""


class BadFrame:
    """What the stdin thread queues when a frame's length is unusable: ``message`` says why."""

    def __init__(self, message: str) -> None:
        self.message = message


_USAGE = """pi-lsp [COMMAND] [...]
  pi-lsp [--stdio] [--log-file F] [-v]   the LSP daemon on stdio (the default)
  pi-lsp exec [...]                      run tool calls on the filesystem (JSON Lines in and out)
  pi-lsp mcp [...]                       pi-lsp's tools for other agents over MCP (stdio)
  pi-lsp demo [...]                      the bundled end-to-end demo
  pi-lsp replay [...]                    a loopback OpenAI-compatible server replaying a recording
  pi-lsp --version"""

_COMMANDS = "Run `pi-lsp exec --help`, `pi-lsp mcp --help`, `pi-lsp demo --help` or `pi-lsp replay --help` for their options."


def main(argv: list[str] | None = None) -> int:
    """Run the daemon on stdio; return its exit code (0 after ``shutdown`` + ``exit``, 128 + the
    signal's number after one of :data:`STOP_SIGNALS`, else 1)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C while starting, or after the session was already ended
        return 128 + signal.SIGINT


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(
        prog="pi-lsp",
        usage=_USAGE,
        description="pi-lsp: the editor-side tool host for an AI coding agent.",
        epilog=_COMMANDS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--stdio", action="store_true", help="serve on stdio (the default)")
    parser.add_argument("--log-file", help="write logs to this file instead of stderr")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logs, pygls included")
    parser.add_argument("-V", "--version", action="version", version=f"pi-lsp {__version__}")
    args = parser.parse_args(argv)
    _setup_logging(args.log_file, args.verbose)
    proto_in, proto_out = _claim_stdio()

    with long_lived_objects():  # the server, its converter and handler tables live until exit
        from pi_lsp.daemon.server import create_server

        server = create_server()
    server.startup_chores.append(_take_charge_of_processes)
    logger.info("pi-lsp %s serving on stdio (pid %d)", __version__, os.getpid())
    return asyncio.run(serve_until_signal(server, proto_in, proto_out))


def _take_charge_of_processes() -> None:
    """Become the subreaper of the tools' processes and clean what killed pi-lsp processes left;
    before the first session, after the first ``initialize`` reply (no tool runs before it)."""
    from pi_lsp.tools.leftovers import clean_leftovers
    from pi_lsp.tools.shell.processes import become_child_subreaper

    become_child_subreaper()
    clean_leftovers()


async def serve_until_signal(server: Any, reader: BinaryIO, writer: BinaryIO) -> int:
    """:func:`serve`, ended cleanly by any of :data:`STOP_SIGNALS` (exit code 128 + signal)."""
    loop = asyncio.get_running_loop()

    def stop(signum: int) -> None:
        logger.info("%s received: ending the session", signal.Signals(signum).name)
        server.request_exit(128 + signum)

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop, signum)
    try:
        code = await serve(server, reader, writer)
        await _finish_other_tasks()
        return code
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)


def _setup_logging(log_file: str | None, verbose: bool) -> None:
    from pi_lsp.daemon.client_log import CLIENT_LOG, QuietWhileConnected

    handler: logging.Handler = (
        logging.FileHandler(log_file, encoding="utf-8") if log_file else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    if not log_file and not verbose:
        handler.setLevel(logging.WARNING)
        handler.addFilter(QuietWhileConnected(CLIENT_LOG))
    CLIENT_LOG.setLevel(logging.DEBUG if verbose else logging.INFO)
    CLIENT_LOG.setFormatter(logging.Formatter("%(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(CLIENT_LOG)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    logging.getLogger("pygls").setLevel(logging.DEBUG if verbose else logging.WARNING)


def _claim_stdio() -> tuple[BinaryIO, BinaryIO]:
    """Duplicate fds 0 and 1 for the protocol; leave /dev/null and stderr in their place."""
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    sys.stdout = sys.stderr
    return proto_in, proto_out


async def serve(server: Any, reader: BinaryIO, writer: BinaryIO) -> int:
    """Serve ``server`` (a :class:`~pi_lsp.daemon.server.PiLanguageServer`) over a binary stream pair.

    Returns when ``exit`` arrives or ``reader`` reaches end of file, after ending the session.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes | BadFrame | object | None] = asyncio.Queue()
    output = CoalescingWriter(writer)
    server.protocol.set_writer(output)
    thread = threading.Thread(
        target=_read_frames, args=(reader, loop, queue), name="pi-lsp-stdin", daemon=True
    )
    thread.start()
    # ``exit`` wakes the loop through the queue: one plain ``queue.get`` per frame, no task and
    # no ``asyncio.wait`` per frame (about 10 us each, issue 21). Frames already queued are still
    # handled, as before; the loop ends once it would have to wait.
    stop = asyncio.ensure_future(server.exit_requested.wait())
    stop.add_done_callback(lambda _: queue.put_nowait(_WAKE))
    try:
        while True:
            if queue.empty() and server.exit_requested.is_set():
                break
            body = await queue.get()
            if body is _WAKE:
                continue
            if body is None:
                logger.info("stdin closed: ending the session")
                break
            if isinstance(body, BadFrame):
                _reply_error(server.protocol, None, PARSE_ERROR, f"Parse error: {body.message}")
                logger.error("cannot find the next frame (%s): ending the session", body.message)
                server.exit_code = 1
                break
            dispatch(server.protocol, body)
            if not queue.empty():
                # let what this frame started (a request's task) take its first step before the
                # next frame is handled: a call that never waits is answered before a later
                # request's reply, in the order the client sent them, and tasks are not starved
                # by a burst of frames
                await asyncio.sleep(0)
    finally:
        stop.cancel()
        await server.end_session()
        output.flush()
    code = server.exit_code
    return code if code is not None else (0 if server.protocol._shutdown else 1)


async def _finish_other_tasks() -> None:
    """Cancel the handlers still running once the session ended and collect their outcome, so
    that leaving the event loop reports nothing (their errors were answered or logged already)."""
    others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


def _read_frames(
    stream: BinaryIO, loop: asyncio.AbstractEventLoop, queue: "asyncio.Queue[bytes | BadFrame | None]"
) -> None:
    """Thread body: read ``Content-Length`` framed bodies and queue them; ``None`` at EOF, and a
    :class:`BadFrame` (then stop reading) for a length that is not an integer in 0..MAX_FRAME_BYTES."""

    def put(item: bytes | BadFrame | None) -> bool:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
            return True
        except RuntimeError:  # the loop is closed: the daemon is exiting
            return False

    try:
        while True:
            header = _read_header(stream)
            if header is None:
                put(None)
                return
            if isinstance(header, BadFrame):
                put(header)
                return
            body = stream.read(header)
            if len(body) < header:
                put(None)
                return
            if not put(body):
                return
    except MemoryError:
        put(BadFrame("no memory for a frame of that length"))
    except (OSError, ValueError):
        logger.exception("reading stdin failed")
        put(None)


def _read_header(stream: BinaryIO) -> int | BadFrame | None:
    """Read one header section; the body length, a :class:`BadFrame`, or ``None`` at end of file.

    Blank lines before a header are skipped. A header section that ends without ``Content-Length``,
    a line that is not ``Name: value`` (a body sent without headers starts with ``{``), or a line
    longer than :data:`MAX_HEADER_LINE_BYTES` is a :class:`BadFrame`: there is no way to tell where
    the next frame starts, and reading on would swallow every later frame.
    """
    length: int | BadFrame | None = None
    seen = False
    peek = getattr(stream, "peek", None)
    while True:
        if peek is not None:  # a body without headers is refused now, not at its first newline
            first = peek(1)[:1]
            if first and not _HEADER_START.match(first):
                return BadFrame(f"a frame without a Content-Length header (it starts with {first!r})")
        line = stream.readline(MAX_HEADER_LINE_BYTES + 1)
        if not line:
            return None
        if len(line) > MAX_HEADER_LINE_BYTES:
            return BadFrame(f"a header line is longer than {MAX_HEADER_LINE_BYTES} bytes")
        text = line.strip()
        if not text:
            if length is not None:
                return length
            if seen:
                return BadFrame("a frame without a Content-Length header")
            continue
        seen = True
        if not _HEADER.match(text):
            shown = text[:40].decode("utf-8", "replace")
            return BadFrame(f"a frame without a Content-Length header (read {shown!r} where a header belongs)")
        if match := _CONTENT_LENGTH.match(text):
            length = _frame_length(match.group(1).strip())
            if isinstance(length, BadFrame):
                return length


def _frame_length(value: bytes) -> int | BadFrame:
    """A ``Content-Length`` value as bytes to read, or why it cannot be used (LSP base protocol)."""
    text = value.decode("ascii", "replace")
    if not value.isdigit():
        return BadFrame(f"Content-Length {text[:40]!r} is not a non-negative integer")
    length = int(value)
    if length > MAX_FRAME_BYTES:
        return BadFrame(f"Content-Length {length} is over the limit of {MAX_FRAME_BYTES} bytes")
    return length


def dispatch(protocol: Any, body: bytes) -> None:
    """Decode one frame and hand it to pygls, answering malformed input per JSON-RPC 2.0.

    The body is read by :func:`pi_lsp.llm.json_text.loads`: ``NaN``/``Infinity`` and nesting too
    deep to parse are a ParseError (id null); a message that parsed but nests deeper than
    :data:`~pi_lsp.llm.json_text.MAX_DEPTH` is InvalidParams when it is a request (so it still
    gets its one answer) and a WARNING line otherwise.
    """
    try:
        data = json_text.loads(body, max_depth=None)
    except ValueError as exc:
        _reply_error(protocol, None, PARSE_ERROR, f"Parse error: {exc}")
        return
    problem = _shape_problem(data)
    if problem is not None:
        msg_id = data.get("id") if isinstance(data, dict) else None
        _reply_error(protocol, msg_id if _valid_id(msg_id) else None, INVALID_REQUEST, problem)
        return
    method = data.get("method")
    try:
        if json_text.may_nest_deeper(body):
            json_text.check_depth(data)
    except ValueError as exc:
        if method is not None and "id" in data:
            _reply_error(protocol, data["id"], INVALID_PARAMS, f"{method}: invalid params: {exc}")
        else:
            logger.warning("dropped a %s message: %s", method or "response", exc)
        return
    try:
        message = protocol.structure_message(data)
    except JsonRpcException as exc:
        if method is not None and "id" in data:
            code = exc.code if exc.code == INVALID_REQUEST else INVALID_PARAMS
            detail = exc.message if code == INVALID_REQUEST else f"{method}: invalid params: {_params_problem(exc)}"
            _reply_error(protocol, data["id"], code, detail)
        else:
            logger.warning("dropped a malformed %s message: %s", method or "response", _params_problem(exc))
        return
    try:
        protocol.handle_message(message)
    except Exception:
        logger.exception("handling a %s message failed", method or "response")


def _valid_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _shape_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "Invalid Request: a message must be a JSON object"
    if data.get("jsonrpc") != "2.0":
        return 'Invalid Request: "jsonrpc" must be "2.0"'
    if "method" in data:
        if not isinstance(data["method"], str):
            return 'Invalid Request: "method" must be a string'
        if "id" in data and not _valid_id(data["id"]):
            return 'Invalid Request: "id" must be a string or an integer'
        return None
    if "id" in data and ("result" in data or "error" in data):
        return None
    return "Invalid Request: neither a request, a notification nor a response"


def _params_problem(exc: JsonRpcException) -> str:
    cause = exc.__cause__
    if isinstance(cause, cattrs.ClassValidationError):
        return "; ".join(cattrs.transform_error(cause))[:1000]
    return str(cause or exc)[:1000]


def _reply_error(protocol: Any, msg_id: Any, code: int, message: str) -> None:
    logger.warning("answering error %d to id %r: %s", code, msg_id, message)
    # a plain dict: lsprotocol's converter would leave out ``"id": null``, which JSON-RPC requires
    protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})
