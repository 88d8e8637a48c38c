"""How long from a streamed byte to the ``pi/event`` the editor receives (issue 6 target: 5 ms).

A loopback server in this process streams a chat completion: a role chunk, a pause, then one text
chunk whose write time is recorded. The daemon (``python -m pi_lsp`` over stdio, driven by
FakeEditor in this process) turns it into ``message_update``; the bench records when that
notification reaches the client. Both clocks are this process's ``time.monotonic``. Repeated
``--runs`` times (one prompt each, same daemon); prints the median and worst latency in ms.

Run: ``python3 bench/bench_first_event.py [--runs 30]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pi_lsp.demo.fake_editor import FakeEditor  # noqa: E402

PAUSE_SECONDS = 0.1
MARK = "first-byte"


class _Stream(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    written: list[float] = []

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _chunk(self, payload: dict[str, Any] | str) -> None:
        data = ("data: " + (payload if isinstance(payload, str) else json.dumps(payload)) + "\n\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()

        def choice(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {"id": "b", "object": "chat.completion.chunk", "model": "bench",
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        self._chunk(choice({"role": "assistant", "content": ""}))
        time.sleep(PAUSE_SECONDS)
        _Stream.written.append(time.monotonic())
        self._chunk(choice({"content": MARK}))
        self._chunk(choice({}, "stop"))
        self._chunk("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # clients closing keep-alives
            super().handle_error(request, client_address)


class _Received(list):  # type: ignore[type-arg]
    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def append(self, item: Any) -> None:
        event = item.get("event", {}) if isinstance(item, dict) else {}
        if event.get("type") == "message_update" and event.get("delta", {}).get("text") == MARK:
            self.times.append(time.monotonic())
        super().append(item)


async def main(runs: int) -> int:
    httpd = _Server(("127.0.0.1", 0), _Stream)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    with tempfile.TemporaryDirectory() as root:
        env = {"PI_LSP_SESSIONS_DIR": str(Path(root) / "sessions")}
        import os

        editor = FakeEditor(Path(root), initialization_options={"pi": {"baseUrl": url, "maxRetries": 0}},
                            env={**os.environ, **env})
        received = _Received()
        editor.events = received
        await editor.start()
        try:
            for _ in range(runs):
                reply = await editor.request("pi/prompt", {"text": "hello"})
                assert reply["stopReason"] == "stop", reply
        finally:
            await editor.stop()
            httpd.shutdown()
    latencies = [(r - w) * 1000 for w, r in zip(_Stream.written, received.times)]
    if len(latencies) != runs:
        print(f"expected {runs} measurements, got {len(latencies)}")
        return 1
    median, worst = statistics.median(latencies), max(latencies)
    print(f"first streamed byte -> pi/event at the client, {runs} runs: "
          f"median {median:.2f} ms, worst {worst:.2f} ms (target 5 ms): {'OK' if median <= 5 else 'SLOW'}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    sys.exit(asyncio.run(main(parser.parse_args().runs)))
