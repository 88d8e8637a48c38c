"""The daemon's log over real stdio: expected errors are one WARNING line, settings problems once."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.daemon_support import RawServer, server_tmp


def test_expected_errors_are_single_warning_lines_and_settings_problems_are_logged_once(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    server = RawServer(tmp_path, server_tmp(tmp_path), "--log-file", str(log))
    try:
        server.send({"jsonrpc": "2.0", "id": 1, "method": "pi/listTools", "params": {}})
        assert server.receive()["error"]["code"] == -32002  # before initialize
        server.send({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {
            "processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {},
            "initializationOptions": {"pi": {"maxTurns": "many"}},
        }})
        assert "result" in server.receive()
        server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        server.send({"jsonrpc": "2.0", "id": 3, "method": "pi/setActiveTools", "params": {"names": ["teleport"]}})
        assert server.receive()["error"]["code"] == -32602
    finally:
        assert server.close() in (0, 1)
    lines = log.read_text(encoding="utf-8").splitlines()
    assert not [line for line in lines if " ERROR " in line or line.startswith(("Traceback", "  "))], lines
    warnings = [line for line in lines if " WARNING " in line]
    assert any("-32002" in line and "not initialized" in line for line in warnings), warnings
    assert any("-32602" in line and "teleport" in line for line in warnings), warnings
    assert len([line for line in warnings if "pi.maxTurns" in line]) == 1, warnings
