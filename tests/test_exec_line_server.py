"""``LineServer`` (pi-lsp exec's line order) in process: re-entrant stop, waiting lines, failures."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from pi_lsp.exec.jsonl_host import LineServer


def run(scenario: Any) -> Any:
    return asyncio.run(scenario())


def test_a_stop_from_inside_a_line_still_writes_that_lines_answer_and_no_later_one() -> None:
    async def scenario() -> tuple[int, list[Any]]:
        written: list[Any] = []

        async def respond(line: bytes) -> dict[str, Any]:
            if line == b"stop":
                server.stop()  # re-enters the server in the middle of answering this line
            return {"line": line.decode()}

        server = LineServer(asyncio.get_running_loop(), respond, written.append)
        server.add([b"a", b"stop", b"b"])
        return await server.finished, written

    status, written = run(scenario)
    assert status == 0
    assert written == [{"line": "a"}, {"line": "stop"}]


def test_lines_after_a_waiting_line_wait_for_its_answer_and_blank_lines_are_skipped() -> None:
    async def scenario() -> list[Any]:
        written: list[Any] = []
        gate = asyncio.Event()

        async def respond(line: bytes) -> dict[str, Any]:
            if line == b"slow":
                await gate.wait()
            return {"line": line.decode()}

        server = LineServer(asyncio.get_running_loop(), respond, written.append)
        server.add([b"a", b"slow", b" ", b"b"])
        server.add([b"c"])
        server.end()
        await asyncio.sleep(0)
        assert written == [{"line": "a"}]  # b and c wait for the slow line
        gate.set()
        assert await server.finished == 0
        return written

    assert run(scenario) == [{"line": n} for n in ("a", "slow", "b", "c")]


def test_a_failed_write_ends_with_status_1_and_a_failing_respond_raises() -> None:
    async def unwritable() -> tuple[int, int]:
        calls: list[bytes] = []

        async def respond(line: bytes) -> dict[str, Any]:
            calls.append(line)
            return {}

        def write(_obj: Any) -> None:
            raise BrokenPipeError(32, "Broken pipe")

        server = LineServer(asyncio.get_running_loop(), respond, write)
        server.add([b"a", b"b"])
        return await server.finished, len(calls)

    assert run(unwritable) == (1, 1)

    async def broken() -> None:
        async def respond(line: bytes) -> dict[str, Any]:
            await asyncio.sleep(0)
            raise RuntimeError("a bug")

        server = LineServer(asyncio.get_running_loop(), respond, lambda _obj: None)
        server.add([b"a"])
        await server.finished

    with pytest.raises(RuntimeError, match="a bug"):
        run(broken)
