"""The approval log line: routine allows at DEBUG, every other decision at INFO (pi_lsp.policy.approvals)."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from pi_lsp.agent.pipeline import ToolPipeline
from pi_lsp.policy import approvals
from pi_lsp.policy.approvals import ApprovalPolicy, LogJournal, log_decision
from pi_lsp.tools import TOOL_NAMES, create_tools
from tests.policy.test_approval_hook import Session

LOG = logging.getLogger("pi_lsp.test_approval_log")


def _entry(policy: str, decision: str, by: str) -> dict[str, object]:
    return {"type": "approval", "toolName": "read", "scope": "a.txt", "policy": policy, "decision": decision, "by": by}


@pytest.mark.parametrize(
    ("policy", "decision", "by", "level"),
    [
        ("allow", "allow", "rule", logging.DEBUG),
        ("ask", "allow", "user", logging.INFO),
        ("ask", "allow", "grant", logging.INFO),
        ("ask", "deny", "fallback", logging.INFO),
        ("deny", "deny", "protected", logging.INFO),
    ],
)
def test_level_follows_the_decision(caplog: pytest.LogCaptureFixture, policy: str, decision: str, by: str, level: int) -> None:
    caplog.set_level(logging.DEBUG, logger=LOG.name)
    entry = _entry(policy, decision, by)
    log_decision(LOG, entry)
    [record] = caplog.records
    assert record.levelno == level
    assert record.getMessage() == "approval: " + json.dumps(entry, ensure_ascii=False)


def test_nothing_is_written_below_the_level(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger=LOG.name)
    log_decision(LOG, _entry("allow", "allow", "rule"))
    log_decision(LOG, _entry("deny", "deny", "rule"))
    assert [r.levelno for r in caplog.records] == [logging.INFO]


async def test_log_journal_spares_the_routine_allows_only_while_debug_is_off(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """The policy does not build the entries a LogJournal would drop, and builds every other one."""
    session = Session(tmp_path, None)
    session.policy = ApprovalPolicy(session.env, TOOL_NAMES, journal=LogJournal(LOG))
    session.pipeline = ToolPipeline(create_tools(session.env))
    session.pipeline.add_before_hook(session.policy, first=True)
    (session.cwd / "a.txt").write_text("a\n")
    (tmp_path / "out.txt").write_text("outside\n")
    caplog.set_level(logging.INFO, logger=LOG.name)
    built: list[dict[str, object]] = []
    real_log_decision = approvals.log_decision

    def counting(log: logging.Logger, entry: dict[str, object]) -> None:
        built.append(entry)
        real_log_decision(log, entry)

    approvals.log_decision = counting  # type: ignore[assignment]
    try:
        assert await session.call("read", path="a.txt") == (False, "a\n")
        assert (await session.call("read", path=str(tmp_path / "out.txt")))[0]  # asked: the fallback refuses
        assert [entry["decision"] for entry in built] == ["deny"]
        assert [r.levelno for r in caplog.records] == [logging.INFO]
        caplog.set_level(logging.DEBUG, logger=LOG.name)
        assert await session.call("read", path="a.txt") == (False, "a\n")
        assert [entry["decision"] for entry in built] == ["deny", "allow"]
        assert caplog.records[-1].levelno == logging.DEBUG
    finally:
        approvals.log_decision = real_log_decision  # type: ignore[assignment]
