"""pi/event forwarding: bounded payloads, updates coalesced to new text at a limited rate."""

from __future__ import annotations

import asyncio
from typing import Any

from pi_lsp.daemon.event_relay import EventRelay, bounded


def _update(text: str) -> dict[str, Any]:
    return {
        "type": "tool_execution_update",
        "toolCallId": "c1",
        "toolName": "bash",
        "args": {"command": "x"},
        "partialResult": {"content": [{"type": "text", "text": text}], "details": None},
    }


async def test_updates_carry_only_new_text_and_are_coalesced() -> None:
    sent: list[dict[str, Any]] = []
    relay = EventRelay(sent.append, "external", min_interval_seconds=0.2, max_update_chars=5)
    relay({"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash", "args": {}})
    relay(_update("ab"))  # first update goes out at once
    relay(_update("abcd"))  # within the interval: held
    relay(_update("abcdefghijk"))  # replaces the held one
    assert [e["event"]["type"] for e in sent] == ["tool_execution_start", "tool_execution_update"]
    assert sent[1] == {
        "sessionId": "external",
        "event": {"type": "tool_execution_update", "toolCallId": "c1", "toolName": "bash", "output": "ab"},
    }
    for _ in range(100):  # the held update is flushed once the interval has passed
        if len(sent) == 3:
            break
        await asyncio.sleep(0.05)
    assert len(sent) == 3
    assert sent[2]["event"]["output"] == "ghijk"  # new text only, bounded to its tail
    relay({"type": "tool_execution_end", "toolCallId": "c1", "toolName": "bash", "result": {}, "isError": False})
    assert sent[-1]["event"]["type"] == "tool_execution_end"
    relay.close()


async def test_pending_update_is_flushed_before_the_end_event() -> None:
    sent: list[dict[str, Any]] = []
    relay = EventRelay(sent.append, "external", min_interval_seconds=60)
    relay(_update("one\n"))
    relay(_update("one\ntwo\n"))
    relay({"type": "tool_execution_end", "toolCallId": "c1", "toolName": "bash", "result": {}, "isError": False})
    kinds = [(e["event"]["type"], e["event"].get("output")) for e in sent]
    assert kinds == [
        ("tool_execution_update", "one\n"),
        ("tool_execution_update", "two\n"),
        ("tool_execution_end", None),
    ]


def test_bounded_cuts_long_strings_and_drops_image_data() -> None:
    value = {"args": {"content": "x" * 100}, "result": {"content": [{"type": "image", "data": "QUJD" * 50, "mimeType": "image/png"}]}}
    out = bounded(value, 10)
    assert out["args"]["content"] == "x" * 10 + "…[90 more characters]"
    assert out["result"]["content"][0] == {"type": "image", "data": "[image omitted]", "mimeType": "image/png"}
    assert value["args"]["content"] == "x" * 100  # the original is untouched


def test_a_failing_sender_never_raises_into_the_pipeline() -> None:
    def broken(_: dict[str, Any]) -> None:
        raise BrokenPipeError("gone")

    relay = EventRelay(broken, "external")
    relay({"type": "tool_execution_start", "toolCallId": "c1", "toolName": "read", "args": {}})
