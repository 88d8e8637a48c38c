"""``$/pi/nudge`` (:mod:`pi_lsp.daemon.read_nudge`, issue 21) from the real daemon over stdio.

A client that has not answered a request may be one whose reader stopped after a reply (Emacs
28's jsonrpc.el): the daemon writes ``$/pi/nudge`` once its output has been quiet for
``pi.nudge.afterSeconds``, again and again at doubling intervals until the answer comes. The
eglot scenario (tests/editors/test_eglot_stalled_read.py) shows that this frees the stuck request.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.daemon_support import RawServer, server_tmp

NUDGE = "$/pi/nudge"


def test_an_unanswered_request_is_nudged_until_answered(tmp_path: Path) -> None:
    server = RawServer(tmp_path, server_tmp(tmp_path))
    try:
        server.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {"workspace": {"configuration": True}},
            "initializationOptions": {"pi": {"nudge": {"afterSeconds": 0.05, "trailing": 0}}},
        }})
        assert "result" in server.receive()
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        request = None
        nudges = 0
        while nudges < 3:  # the client does not answer workspace/configuration yet
            message = json.loads(server.receive_raw())
            if message.get("method") == "workspace/configuration":
                request = message
            elif message.get("method") == NUDGE and request is not None:
                assert message == {"jsonrpc": "2.0", "method": NUDGE, "params": {}}
                nudges += 1
        assert request is not None
        server.send({"jsonrpc": "2.0", "id": request["id"], "result": [None]})
        server.send({"jsonrpc": "2.0", "id": 1, "method": "shutdown"})
        assert server.receive() == {"jsonrpc": "2.0", "id": 1, "result": None}
        server.send({"jsonrpc": "2.0", "method": "exit"})
    finally:
        assert server.close() == 0
