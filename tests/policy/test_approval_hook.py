"""The approval hook on a real ToolPipeline with the real tools on disk: each answer's outcome,
session grants, fallbacks, timeouts, cancellation and the journal."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.agent.pipeline import ToolPipeline
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.llm.types import ToolCall
from pi_lsp.policy.approvals import (
    ALLOW_ONCE,
    ALLOW_SESSION,
    ANSWERS,
    DENY,
    ApprovalPolicy,
    ApprovalRequest,
    ApprovalUnavailable,
)
from pi_lsp.tools import TOOL_NAMES, create_tools
from pi_lsp.tools.environment import ToolEnvironment, ToolSettings
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from pi_lsp.tools.shell.processes import ProcessRegistry


class Session:
    """A pipeline with every tool active, the policy first, a scripted user and a journal list."""

    def __init__(self, root: Path, answer: Callable[[ApprovalRequest], Awaitable[str | None]] | None, **config: Any) -> None:
        self.cwd = root / "ws"
        self.cwd.mkdir(exist_ok=True)
        (root / "tmp").mkdir(exist_ok=True)
        self.env = ToolEnvironment(
            cwd=self.cwd, files=LocalFileAccess(), temp_dir=root / "tmp", workspace_folders=[self.cwd],
            processes=ProcessRegistry(), settings=ToolSettings(bash_timeout_seconds=30),
        )
        self.pipeline = ToolPipeline(create_tools(self.env))
        self.requests: list[ApprovalRequest] = []
        self.journal: list[dict[str, Any]] = []
        self._answer = answer

        async def ask(request: ApprovalRequest) -> str | None:
            self.requests.append(request)
            assert self._answer is not None
            return await self._answer(request)

        self.policy = ApprovalPolicy(
            self.env, TOOL_NAMES, ask=ask if answer is not None else None, journal=self.journal.append
        )
        self.problems = self.policy.configure(**config)
        self.pipeline.add_before_hook(self.policy, first=True)

    async def call(self, name: str, session_id: str = "s1", signal: AbortSignal | None = None, **arguments: Any) -> tuple[bool, str]:
        result = await self.pipeline.execute(
            ToolCall(id=f"c{len(self.journal)}", name=name, arguments=arguments), session_id=session_id, signal=signal
        )
        return result.is_error, "".join(getattr(b, "text", "") for b in result.content)


def answering(title: str | None) -> Callable[[ApprovalRequest], Awaitable[str | None]]:
    async def answer(request: ApprovalRequest) -> str | None:
        return title

    return answer


async def test_allow_once_runs_the_call_and_asks_again_next_time(tmp_path: Path) -> None:
    session = Session(tmp_path, answering(ALLOW_ONCE))
    assert await session.call("bash", command="echo hi > out.txt") == (False, "(no output)")
    assert (session.cwd / "out.txt").read_text() == "hi\n"
    await session.call("bash", command="echo hi > out.txt")
    assert len(session.requests) == 2
    request = session.requests[0]
    assert request.scope.shown == "echo hi > out.txt" and request.session_id == "s1"
    assert "`echo hi > out.txt`" in request.message and "`>` redirects output" in request.message


async def test_deny_blocks_and_tells_the_model_the_user_declined(tmp_path: Path) -> None:
    session = Session(tmp_path, answering(DENY))
    is_error, text = await session.call("bash", command="touch made")
    assert is_error and text.startswith("The user declined this tool call (bash `touch made`)")
    assert not (session.cwd / "made").exists()
    outside = tmp_path / "outside.txt"
    is_error, text = await session.call("write", path=str(outside), content="x")
    assert is_error and "declined" in text and not outside.exists()


async def test_a_dismissed_prompt_is_a_denial(tmp_path: Path) -> None:
    session = Session(tmp_path, answering(None))
    is_error, text = await session.call("bash", command="touch made")
    assert is_error and "the user dismissed the prompt" in text and not (session.cwd / "made").exists()


async def test_allow_for_this_session_covers_exactly_the_shown_scope_in_that_session(tmp_path: Path) -> None:
    session = Session(tmp_path, answering(ALLOW_SESSION))
    await session.call("bash", command="touch a")
    await session.call("bash", command="touch a")
    assert len(session.requests) == 1  # granted for the session
    await session.call("bash", command="touch b")
    assert len(session.requests) == 2  # another command is another scope
    await session.call("bash", command="touch a", session_id="s2")
    assert len(session.requests) == 3  # a new session asks again
    outside = tmp_path / "o.txt"
    await session.call("write", path=str(outside), content="1")
    await session.call("write", path=str(outside), content="2")
    await session.call("write", path=str(tmp_path / "p.txt"), content="3")
    assert len(session.requests) == 5 and outside.read_text() == "2"
    session.policy.end_session("s1")
    await session.call("bash", command="touch a")
    assert len(session.requests) == 6
    by = [entry["by"] for entry in session.journal]
    assert by.count("grant") == 2 and by.count("user") == 6


async def test_protected_and_denied_calls_never_ask(tmp_path: Path) -> None:
    session = Session(tmp_path, answering(ALLOW_ONCE), rules=[{"tool": "bash", "command": "^rm ", "action": "deny"}])
    is_error, text = await session.call("write", path=".env", content="KEY=1")
    assert is_error and "protected path (.env)" in text and not (session.cwd / ".env").exists()
    is_error, text = await session.call("bash", command="rm -rf x")
    assert is_error and "pi.approvals.rules[0]" in text
    assert session.requests == []
    assert await session.call("bash", command="ls") == (False, "(no output)")
    assert session.requests == []


async def test_reading_a_protected_file_asks_and_allow_once_reads_it(tmp_path: Path) -> None:
    session = Session(tmp_path, answering(ALLOW_ONCE))
    (session.cwd / ".env").write_text("KEY=1\n")
    assert await session.call("read", path=".env") == (False, "KEY=1\n")
    assert "its content would go to the model" in session.requests[0].reason


@pytest.mark.parametrize("fallback", ["deny", "allow"])
async def test_no_answer_within_the_timeout_applies_the_fallback_and_says_why(tmp_path: Path, fallback: str) -> None:
    async def never(request: ApprovalRequest) -> str | None:
        await asyncio.Event().wait()
        return None

    session = Session(tmp_path, never, timeout_seconds=0.2, fallback=fallback)
    is_error, text = await session.call("bash", command="touch made")
    assert (session.cwd / "made").exists() is (fallback == "allow")
    if fallback == "deny":
        assert is_error and "needs the user's approval and was not run" in text
        assert "no answer within 0.2 s; the fallback is deny" in text
    assert session.journal[-1]["by"] == "fallback"


async def test_an_editor_that_cannot_ask_gets_the_fallback(tmp_path: Path) -> None:
    async def unavailable(request: ApprovalRequest) -> str | None:
        raise ApprovalUnavailable("window/showMessageRequest failed: Method Not Found")

    session = Session(tmp_path, unavailable)
    is_error, text = await session.call("bash", command="touch made")
    assert is_error and "the editor cannot ask (window/showMessageRequest failed: Method Not Found)" in text
    (tmp_path / "other").mkdir()
    nobody = Session(tmp_path / "other", None)
    is_error, text = await nobody.call("bash", command="touch made")
    assert is_error and "there is no editor to ask; the fallback is deny" in text


async def test_an_answer_after_the_call_was_cancelled_changes_nothing(tmp_path: Path) -> None:
    asked = asyncio.Event()
    release = asyncio.Event()

    async def late(request: ApprovalRequest) -> str | None:
        asked.set()
        try:
            await release.wait()
        finally:
            late.finished = True  # type: ignore[attr-defined]
        return ALLOW_SESSION

    session = Session(tmp_path, late)
    signal = AbortSignal()
    task = asyncio.create_task(session.call("bash", signal=signal, command="touch made"))
    await asyncio.wait_for(asked.wait(), 5)
    signal.abort("user pressed stop")
    assert await asyncio.wait_for(task, 5) == (True, "Operation aborted")
    release.set()
    await asyncio.sleep(0)
    assert not (session.cwd / "made").exists()
    assert session.policy.grants == {}  # the late "Allow for this session" granted nothing
    assert session.journal[-1]["by"] == "cancelled" and session.journal[-1]["decision"] == "deny"
    session._answer = answering(DENY)
    await session.call("bash", command="touch made")
    assert len(session.requests) == 2  # asked again, not silently allowed


async def test_every_decision_is_journaled(tmp_path: Path) -> None:
    session = Session(tmp_path, answering(ALLOW_SESSION))
    (session.cwd / "a.txt").write_text("a\n")
    await session.call("read", path="a.txt")
    await session.call("bash", command="touch z")
    await session.call("bash", command="touch z")
    await session.call("edit", path=".git/config", edits=[{"oldText": "a", "newText": "b"}])
    assert [(e["toolName"], e["decision"], e["by"]) for e in session.journal] == [
        ("read", "allow", "default"),
        ("bash", "allow", "user"),
        ("bash", "allow", "grant"),
        ("edit", "deny", "protected"),
    ]
    entry = session.journal[1]
    assert entry["type"] == "approval" and entry["sessionId"] == "s1" and entry["scope"] == "touch z"
    assert entry["answer"] == ALLOW_SESSION and entry["grant"] == "session" and entry["policy"] == "ask"
    assert isinstance(entry["timestamp"], int)


async def test_malformed_rules_are_reported_and_leave_the_safe_defaults(tmp_path: Path) -> None:
    session = Session(tmp_path, answering(DENY), rules=[{"tool": "*", "action": "allow", "why": "yolo"}])
    assert any("unknown key 'why'" in p for p in session.problems)
    is_error, _ = await session.call("bash", command="touch made")
    assert is_error and len(session.requests) == 1  # asked, not allowed by the broken rule


def test_the_prompt_offers_the_three_actions_in_order() -> None:
    assert ANSWERS == ("Allow once", "Allow for this session", "Deny")
