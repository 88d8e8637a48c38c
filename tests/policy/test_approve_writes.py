"""``env.approve_writes``: the policy's judgement of the files a rename changes beyond the one it
names (issue 17): inside the workspace allowed, outside asked per file, protected refused, rules
applied, each decision journaled."""

from __future__ import annotations

from pathlib import Path

from pi_lsp.agent.tool import ToolContext
from pi_lsp.policy.approvals import ALLOW_ONCE, DENY
from tests.policy.test_approval_hook import Session, answering


def _ctx() -> ToolContext:
    return ToolContext(tool_call_id="call-r", session_id="s1")


async def test_inside_the_workspace_is_allowed_without_asking(tmp_path: Path) -> None:
    session = Session(tmp_path, answering(DENY))
    assert session.env.approve_writes is not None
    paths = [session.cwd / "a.py", session.cwd / "pkg" / "b.py"]
    assert await session.env.approve_writes("rename", paths, _ctx()) is None
    assert session.requests == []
    assert [(e["toolName"], e["scope"], e["decision"]) for e in session.journal] == [
        ("rename", "a.py", "allow"), ("rename", "pkg/b.py", "allow"),
    ]


async def test_outside_the_workspace_is_asked_for_each_file(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.py"
    allowed = Session(tmp_path, answering(ALLOW_ONCE))
    assert await allowed.env.approve_writes("rename", [outside], _ctx()) is None  # type: ignore[misc]
    assert [r.scope.path for r in allowed.requests] == [outside]
    denied = Session(tmp_path, answering(DENY))
    refusal = await denied.env.approve_writes("rename", [denied.cwd / "a.py", outside], _ctx())  # type: ignore[misc]
    assert refusal is not None and refusal.startswith(f"The user declined this tool call (rename `{outside}`)")


async def test_a_protected_file_is_refused_without_asking(tmp_path: Path) -> None:
    session = Session(tmp_path, answering(ALLOW_ONCE), protected_paths=["generated/**"])
    refusal = await session.env.approve_writes(  # type: ignore[misc]
        "rename", [session.cwd / "generated" / "api.py"], _ctx()
    )
    assert refusal is not None and "generated/api.py is a protected path" in refusal
    assert session.requests == []
    env_file = await session.env.approve_writes("rename", [session.cwd / ".env"], _ctx())  # type: ignore[misc]
    assert env_file is not None and "protected path" in env_file


async def test_a_rule_decides_before_the_defaults(tmp_path: Path) -> None:
    rules = [{"tool": "rename", "path": "vendor/**", "action": "deny"}]
    session = Session(tmp_path, answering(ALLOW_ONCE))
    session.policy.known_tools.add("rename")  # the daemon registers the language tools
    assert session.policy.configure(rules=rules) == []
    refusal = await session.env.approve_writes("rename", [session.cwd / "vendor" / "x.py"], _ctx())  # type: ignore[misc]
    assert refusal is not None and "refused by the approval rules" in refusal
