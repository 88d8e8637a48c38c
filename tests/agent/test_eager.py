"""``eager_future``: a coroutine's first step runs at once; a task carries on only if it waits."""

from __future__ import annotations

import asyncio

import pytest

from pi_lsp.agent.eager import eager_future


async def test_a_coroutine_that_never_waits_is_done_without_a_task() -> None:
    ran: list[str] = []

    async def quick() -> int:
        ran.append("body")
        return 7

    future = eager_future(quick())
    assert ran == ["body"] and future.done() and future.result() == 7
    assert not isinstance(future, asyncio.Task)


async def test_its_exception_and_cancellation_are_the_future_s() -> None:
    async def fails() -> None:
        raise ValueError("bad")

    async def cancels() -> None:
        raise asyncio.CancelledError

    failed = eager_future(fails())
    assert failed.done() and isinstance(failed.exception(), ValueError)
    assert eager_future(cancels()).cancelled()


async def test_a_waiting_coroutine_carries_on_in_a_task_with_what_it_awaited() -> None:
    gate: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    steps: list[str] = []

    async def waits() -> str:
        steps.append("first")
        got = await gate
        steps.append("second")
        await asyncio.sleep(0)  # a bare yield to the loop is carried too
        return got + "!"

    future = eager_future(waits())
    assert steps == ["first"] and not future.done()
    gate.set_result("value")
    assert await future == "value!" and steps == ["first", "second"]


async def test_cancelling_the_task_cancels_the_coroutine_where_it_waits() -> None:
    cleaned: list[str] = []

    async def sleeps() -> None:
        try:
            await asyncio.sleep(60)
        finally:
            cleaned.append("finally")

    future = eager_future(sleeps())
    await asyncio.sleep(0)
    future.cancel()
    with pytest.raises(asyncio.CancelledError):
        await future
    assert cleaned == ["finally"]


async def test_an_exception_after_a_wait_is_the_task_s() -> None:
    async def late() -> None:
        await asyncio.sleep(0)
        raise KeyError("late")

    with pytest.raises(KeyError):
        await eager_future(late())


async def test_a_cancel_before_the_task_s_first_step_still_reaches_the_started_coroutine() -> None:
    cleaned: list[str] = []

    async def sleeps() -> str:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cleaned.append("handled")
            await asyncio.sleep(0)
            return "partial"
        return "done"

    future = eager_future(sleeps())
    future.cancel()  # the task has not run a step yet; the coroutine has
    assert await future == "partial" and cleaned == ["handled"]
