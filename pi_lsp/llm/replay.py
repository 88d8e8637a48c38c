"""``pi-lsp replay``: a loopback model server that replays a recorded session.

``pi-lsp replay --session FILE [--format openai|anthropic] [--port 0] [--host 127.0.0.1]
[--chunk-delay-ms N]`` serves the turns of a recording (:mod:`pi_lsp.llm.recording`) one per
request, in order. With ``--format openai`` (the default):

- ``POST /v1/chat/completions`` (and ``/chat/completions``) streams the next turn as server-sent
  events the way real servers do: a role chunk, reasoning and text in pieces of
  ``text_chunk_chars`` characters, each tool call as a header chunk (``index``, ``id``, ``name``)
  followed by its argument text in pieces of ``arg_chunk_chars`` characters, a ``finish_reason``
  chunk, a usage chunk, then ``data: [DONE]``. Chunked transfer encoding, keep-alive.
- With ``--format anthropic``, ``POST /v1/messages`` (and ``/messages``) streams the turn as
  Anthropic Messages API events (:mod:`pi_lsp.llm.replay_anthropic`), each framed with its
  ``event:`` line; errors use the API's ``{"type": "error", "error": {...}}`` shape.
- When the request differs from the turn's ``expect``, one line per difference goes to stderr
  (``replay: turn N: ...``); the turn is served anyway.
- After the last turn, requests get a 400 JSON error saying the recording is exhausted.
- ``GET /v1/models`` lists one model, ``replay``.

The first line on stdout is the base URL (``http://127.0.0.1:PORT/v1``), flushed at once. The
process exits 0 on SIGTERM, SIGINT or when stdin (a pipe or terminal) reaches end of file; a
stdin that is ``/dev/null`` or a file is not watched. A bad recording exits 2 with the reason.

:class:`ReplayServer` is the same server for in-process use (tests, the demo): ``start()``
returns the URL, ``stop()`` shuts it down; it runs in a daemon thread, so it works from both
synchronous and asyncio code.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import stat
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO

from pi_lsp.llm import replay_anthropic
from pi_lsp.llm.recording import RecordedTurn, RecordingError, load_recording

FORMATS = ("openai", "anthropic")

_FINISH = {"stop": "stop", "length": "length", "toolUse": "tool_calls"}


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] if text else []


def turn_chunks(
    turn: RecordedTurn, *, model: str, number: int, text_chunk_chars: int = 24, arg_chunk_chars: int = 16
) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects that stream ``turn`` (see the module docstring)."""
    reply = turn.reply
    base = {"id": f"chatcmpl-replay-{number}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"reasoning_content": p}) for p in _pieces(reply.thinking, text_chunk_chars)]
    out += [chunk({"content": p}) for p in _pieces(reply.text, text_chunk_chars)]
    for index, call in enumerate(reply.tool_calls):
        out.append(chunk({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                          "function": {"name": call.name, "arguments": ""}}]}))
        for piece in _pieces(call.argument_text(), arg_chunk_chars):
            out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    out.append(chunk({}, _FINISH[reply.stop_reason or "stop"]))
    usage = reply.usage
    out.append({**base, "choices": [], "usage": {
        "prompt_tokens": usage.input + usage.cache_read, "completion_tokens": usage.output,
        "total_tokens": usage.input + usage.cache_read + usage.output,
    }})
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # stdout/stderr stay quiet; divergences are reported by the ReplayServer

    def _send_error(self, status: int, message: str) -> None:
        if self.server.owner.format == "anthropic":
            kind = "not_found_error" if status == 404 else "invalid_request_error"
            self._send_json(status, {"type": "error", "error": {"type": kind, "message": message}})
        else:
            self._send_json(status, {"error": {"message": message}})

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send_json(200, {"object": "list", "data": [{"id": "replay", "object": "model", "owned_by": "pi-lsp"}]})
        else:
            self._send_error(404, f"no route {self.path}")

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        owner = self.server.owner
        anthropic = owner.format == "anthropic"
        routes = ("/v1/messages", "/messages") if anthropic else ("/v1/chat/completions", "/chat/completions")
        if self.path.rstrip("/") not in routes:
            self._send_error(404, f"no route {self.path}")
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_error(400, "request body is not JSON")
            return
        taken = owner._take(replay_anthropic.as_chat_request(body) if anthropic else body)
        if taken is None:
            self._send_error(400, f"replay: the recording's {len(owner.turns)} turns were all served")
            return
        number, turn = taken
        model = str(body.get("model") or "replay") if isinstance(body, dict) else "replay"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        sizes = {"text_chunk_chars": owner.text_chunk_chars, "arg_chunk_chars": owner.arg_chunk_chars}
        if anthropic:
            events = [replay_anthropic.sse_bytes(e) for e in replay_anthropic.turn_events(
                turn, model=model, number=number, **sizes)]
        else:
            events = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n".encode("utf-8") for c in turn_chunks(
                turn, model=model, number=number, **sizes)]
            events.append(b"data: [DONE]\n\n")
        for data in events:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()
            if owner.chunk_delay_seconds:
                time.sleep(owner.chunk_delay_seconds)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: "ReplayServer"

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-stream is normal (aborts); anything else is reported."""
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            self.owner._report(f"internal error serving {client_address}: {error!r}")


class ReplayServer:
    """Serve recorded turns over loopback HTTP (see the module docstring).

    ``turns``: the parsed recording, or a path to load. ``port=0`` picks a free port.
    ``api_format``: ``"openai"`` (chat completions) or ``"anthropic"`` (Messages API).
    ``divergences`` collects every logged mismatch (``"turn N: ..."``, N 1-based); ``served``
    counts turns served. Use as a context manager or call :meth:`start`/:meth:`stop`.
    """

    def __init__(
        self,
        turns: list[RecordedTurn] | str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        chunk_delay_seconds: float = 0.0,
        text_chunk_chars: int = 24,
        arg_chunk_chars: int = 16,
        log: TextIO | None = None,
        api_format: str = "openai",
    ) -> None:
        if api_format not in FORMATS:
            raise ValueError(f"api_format must be one of {FORMATS}, got {api_format!r}")
        self.format = api_format
        self.turns = load_recording(turns) if isinstance(turns, (str, Path)) else list(turns)
        self.host, self.port = host, port
        self.chunk_delay_seconds = chunk_delay_seconds
        self.text_chunk_chars, self.arg_chunk_chars = max(1, text_chunk_chars), max(1, arg_chunk_chars)
        self.log = log
        self.served = 0
        self.divergences: list[str] = []
        self._lock = threading.Lock()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://HOST:PORT/v1`` (valid after :meth:`start`)."""
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> str:
        """Bind, start serving in a daemon thread, return :attr:`url`. Raises ``OSError`` if the
        port cannot be bound."""
        self._httpd = _Server((self.host, self.port), _Handler)
        self._httpd.owner = self
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="pi-lsp-replay", daemon=True)
        self._thread.start()
        return self.url

    def stop(self) -> None:
        """Stop serving and close the socket (idempotent)."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "ReplayServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _take(self, body: Any) -> tuple[int, RecordedTurn] | None:
        with self._lock:
            if self.served >= len(self.turns):
                self._report(f"turn {self.served + 1}: request after the last recorded turn")
                return None
            turn = self.turns[self.served]
            self.served += 1
            number = self.served
        for difference in turn.divergences(body):
            self._report(f"turn {number}: {difference}")
        return number, turn

    def _report(self, line: str) -> None:
        self.divergences.append(line)
        stream = self.log if self.log is not None else sys.stderr
        try:
            print(f"replay: {line}", file=stream, flush=True)
        except (OSError, ValueError):
            pass


def _watch_stdin(stop: threading.Event) -> None:
    """Set ``stop`` when stdin (a pipe, socket or terminal) reaches EOF; ignore other stdins."""
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(0)):
        return

    def run() -> None:
        try:
            while os.read(0, 65536):
                pass
        except OSError:
            pass
        stop.set()

    threading.Thread(target=run, name="pi-lsp-replay-stdin", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``pi-lsp replay``; returns the exit status (0 clean, 2 bad arguments)."""
    parser = argparse.ArgumentParser(prog="pi-lsp replay", description="Replay a recorded model session over loopback HTTP.")
    parser.add_argument("--session", required=True, help="recording (JSON Lines, one model turn per line)")
    parser.add_argument("--port", type=int, default=0, help="TCP port (0 = pick a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--chunk-delay-ms", type=float, default=0.0, help="pause between streamed chunks")
    parser.add_argument("--format", choices=FORMATS, default="openai",
                        help="wire format: openai (POST /v1/chat/completions) or anthropic (POST /v1/messages)")
    args = parser.parse_args(argv)
    try:
        server = ReplayServer(args.session, host=args.host, port=args.port,
                              chunk_delay_seconds=max(0.0, args.chunk_delay_ms) / 1000.0, api_format=args.format)
        url = server.start()
    except RecordingError as exc:
        print(f"pi-lsp replay: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"pi-lsp replay: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    _watch_stdin(stop)
    print(url, flush=True)
    try:
        while not stop.wait(0.2):
            pass
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
