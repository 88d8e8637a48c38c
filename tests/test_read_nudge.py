"""``ReadNudge.wrote``: which writes it counts, now that it remembers its event loop (issue 21).

Only a write made on the thread running the event loop counts; a write outside any loop (start-up)
or from another thread never arms a timer. The daemon's nudges as a client sees them are tested in
``tests/e2e/test_daemon_read_nudge.py``.
"""

from __future__ import annotations

import asyncio
import math
import threading

from pi_lsp.daemon.read_nudge import ReadNudge

RESPONSE = {"jsonrpc": "2.0", "id": 1, "result": None}
NOTIFICATION = {"jsonrpc": "2.0", "method": "window/logMessage", "params": {}}


def _nudge(sent: list[int]) -> ReadNudge:
    return ReadNudge(lambda: sent.append(1), lambda: (0.01, 1))


def test_a_write_outside_an_event_loop_is_not_counted() -> None:
    nudge = _nudge([])
    nudge.wrote(RESPONSE)
    nudge.wrote(NOTIFICATION)
    assert nudge._last_write == -math.inf and nudge._timer is None


async def test_a_message_right_after_a_response_is_nudged_in_every_loop_it_runs_in() -> None:
    sent: list[int] = []
    nudge = _nudge(sent)
    nudge.wrote(RESPONSE)
    nudge.wrote(NOTIFICATION)  # may share the client's read with the response: nudged once
    assert nudge._timer is not None
    for _ in range(500):
        if sent:
            break
        await asyncio.sleep(0.01)
    assert sent == [1]

    def in_another_loop() -> None:  # the same object in a loop of another thread (tests do this)
        async def write() -> None:
            nudge.wrote(RESPONSE)
            nudge.wrote(NOTIFICATION)
            assert nudge._timer is not None and nudge._loop is asyncio.get_running_loop()
            nudge.close()

        asyncio.run(write())

    failures: list[BaseException] = []

    def run() -> None:
        try:
            in_another_loop()
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            failures.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert failures == []


async def test_a_write_from_another_thread_arms_nothing_while_the_loop_runs() -> None:
    nudge = _nudge([])
    nudge.wrote(RESPONSE)  # remembered: this loop, this thread
    last = nudge._last_write
    thread = threading.Thread(target=nudge.wrote, args=(NOTIFICATION,))
    thread.start()
    thread.join()
    assert nudge._timer is None and nudge._last_write == last
