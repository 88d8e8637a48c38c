"""The approval log line: routine allows at DEBUG, every other decision at INFO (pi_lsp.policy.approvals)."""

from __future__ import annotations

import json
import logging

import pytest

from pi_lsp.policy.approvals import log_decision

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
