"""Handled notifications leave nothing behind (issue 12, "Memory").

pygls 2.1.1 keeps the future of every notification it handles in ``_request_futures`` forever:
about 2 KB per ``didChange``, 200 MB after 100,000 synced keystrokes. The daemon's protocol removes
each entry once its future is done; 20,000 ``didChange`` notifications must leave less than 1 MB.
"""

from __future__ import annotations

import gc
import io
import json
import tracemalloc
from pathlib import Path

from lsprotocol import types
from pygls.io_ import StdoutWriter

from pi_lsp.daemon.server import create_server
from pi_lsp.daemon.stdio_main import dispatch

NOTIFICATIONS = 20_000


class _Sink(io.RawIOBase):
    """A writer that forgets what it is given (the client's side of stdout)."""

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:  # type: ignore[override]
        return len(data)


def _frame(message: dict) -> bytes:
    return json.dumps(message).encode("utf-8")


async def test_20000_did_change_notifications_retain_less_than_1_mb(tmp_path: Path) -> None:
    server = create_server()
    protocol = server.protocol
    protocol.set_writer(StdoutWriter(_Sink()))
    dispatch(protocol, _frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}}))
    uri = (tmp_path / "a.py").as_uri()
    dispatch(protocol, _frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "x = 0\n"}}}))

    digit = types.Range(start=types.Position(line=0, character=4), end=types.Position(line=0, character=5))

    def change(version: int) -> None:
        # typed messages straight into pygls's handling, where the futures were kept (decoding
        # frames is tested elsewhere and would triple the run time under tracemalloc)
        protocol.handle_message(types.DidChangeTextDocumentNotification(params=types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=digit, text=str(version % 10))],
        )))

    try:
        for version in range(2, 1002):  # warm caches before measuring
            change(version)
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for version in range(1002, 1002 + NOTIFICATIONS):
            change(version)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        assert server.host is not None
        assert server.host.store.get(tmp_path / "a.py").text == f"x = {(1001 + NOTIFICATIONS) % 10}\n"  # they were applied
        assert grown < 1_000_000, f"{NOTIFICATIONS} didChange notifications retained {grown} bytes"
        assert len(protocol._request_futures) <= 2  # the last notification's, forgotten at the next one
    finally:
        await server.end_session()
