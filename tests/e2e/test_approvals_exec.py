"""``pi-lsp exec --approvals allow|deny`` as a real subprocess: no editor to ask, so the flag is the
answer; protected paths and the read-only bash table apply either way (issue 9)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def run(cwd: Path, calls: list[dict[str, Any]], *options: str) -> list[dict[str, Any]]:
    lines = "".join(json.dumps({"toolCall": call}) + "\n" for call in calls)
    done = subprocess.run(
        [sys.executable, "-m", "pi_lsp", "exec", "--cwd", str(cwd), *options],
        input=lines.encode(), capture_output=True, timeout=60, cwd=REPO, check=True,
    )
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


def text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def bash(call_id: str, command: str) -> dict[str, Any]:
    return {"id": call_id, "name": "bash", "arguments": {"command": command}}


def test_the_default_allow_runs_what_would_be_asked(tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    results = run(tmp_path, [
        bash("b", "touch made.txt"),
        {"id": "w", "name": "write", "arguments": {"path": str(outside), "content": "x"}},
    ])
    assert [r["isError"] for r in results] == [False, False]
    assert (tmp_path / "made.txt").exists() and outside.read_text() == "x"
    outside.unlink()


def test_deny_refuses_what_would_be_asked_and_says_why(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    results = run(tmp_path, [bash("b", "touch made.txt"), bash("r", "cat a.txt")], "--approvals", "deny")
    assert results[0]["isError"] is True and not (tmp_path / "made.txt").exists()
    assert "pi-lsp exec has no editor to ask (--approvals deny)" in text(results[0])
    assert results[1]["isError"] is False and text(results[1]) == "hello\n"  # read-only: never asked


def test_protected_paths_are_refused_even_with_allow(tmp_path: Path) -> None:
    results = run(tmp_path, [
        {"id": "w", "name": "write", "arguments": {"path": ".env", "content": "KEY=1"}},
        {"id": "k", "name": "write", "arguments": {"path": "deploy/id_ed25519", "content": "k"}},
        {"id": "e", "name": "write", "arguments": {"path": ".env.example", "content": "KEY="}},
    ])
    assert [r["isError"] for r in results] == [True, True, False]
    assert "is a protected path (.env)" in text(results[0])
    assert not (tmp_path / ".env").exists() and not (tmp_path / "deploy").exists()
    assert (tmp_path / ".env.example").read_text() == "KEY="
