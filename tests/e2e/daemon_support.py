"""Helpers for the end-to-end tests: how to start the daemon, and raw LSP frames."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SERVER_COMMAND = [sys.executable, "-m", "pi_lsp"]


def server_env(**extra: str) -> dict[str, str]:
    """The environment for a server subprocess: this repo importable, ``extra`` added."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), env.get("PYTHONPATH")] if p)
    env.update(extra)
    return env


def server_tmp(tmp_path: Path) -> Path:
    """A private TMPDIR for the server, so a test can see the session temp folder go away."""
    path = tmp_path.parent / f"{tmp_path.name}-servertmp"
    path.mkdir(exist_ok=True)
    return path


class RawServer:
    """The daemon driven with hand-written LSP frames (for malformed input and raw wire keys)."""

    def __init__(self, cwd: Path, tmpdir: Path, *args: str) -> None:
        """Start ``python -m pi_lsp *args`` in ``cwd`` with ``TMPDIR=tmpdir``."""
        self.process = subprocess.Popen(
            [*SERVER_COMMAND, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=cwd, env=server_env(TMPDIR=str(tmpdir)),
        )

    def send_bytes(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def send(self, message: Any) -> None:
        self.send_bytes(json.dumps(message).encode("utf-8"))

    def receive_raw(self) -> bytes:
        """The next frame's body, bytes as sent by the server."""
        assert self.process.stdout is not None
        length = None
        while True:
            line = self.process.stdout.readline()
            assert line, "the server closed stdout"
            if not line.strip():
                break
            name, _, value = line.decode("ascii").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        assert length is not None
        return self.process.stdout.read(length)

    def receive(self, *, skip_notifications: bool = True) -> dict[str, Any]:
        """The next response (server notifications and requests are skipped or answered null)."""
        while True:
            message = json.loads(self.receive_raw())
            if "method" in message and skip_notifications:
                if "id" in message:  # a server request (workspace/configuration): answer null
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": [None]})
                continue
            return message

    def initialize(self, root: Path) -> dict[str, Any]:
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            # toolEvents: the wire tests also check what the tool events of a call carry
            "processId": None, "rootUri": root.as_uri(), "capabilities": {"experimental": {"pi": {"toolEvents": True}}},
        }})
        reply = self.receive()
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return reply

    def close(self) -> int:
        assert self.process.stdin is not None
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.process.wait(timeout=15)
        finally:
            if self.process.poll() is None:
                self.process.kill()




async def wait_until(predicate: Any, timeout: float = 10.0, interval: float = 0.02) -> bool:
    """Poll ``predicate()`` (sync) until true or ``timeout`` seconds pass; return its last value.

    For server messages that arrive on their own schedule (notifications after a request).
    """
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not predicate():
        if loop.time() > deadline:
            return bool(predicate())
        await asyncio.sleep(interval)
    return True
