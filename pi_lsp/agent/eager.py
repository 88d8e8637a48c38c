"""Start a coroutine at once and make a task of it only if it has to wait (issue 21).

Python 3.12 has eager tasks (``asyncio.eager_task_factory``); pi-lsp supports 3.11, where every
task costs a few event-loop iterations before its first line runs. Most tool calls are short:
the policy decides a read without waiting for anything, and a small read is done before it would
have to wait. :func:`eager_future` runs the coroutine's first step in the caller and returns a
finished future when that step finished it; otherwise a :class:`asyncio.Task` carries on exactly
where the coroutine stopped (cancelling that task cancels the coroutine, as with any task).

Differences from ``asyncio.ensure_future`` that callers must accept: the first step runs in the
caller's task and context (``asyncio.current_task()`` there is the caller's), and before
:func:`eager_future` returns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")


def eager_future(coro: Coroutine[Any, Any, T]) -> asyncio.Future[T]:
    """Run ``coro`` up to its first wait; a done future with its outcome, or a task running the rest.

    The outcome of a coroutine that finished in that step is the future's result, exception or
    cancellation (a ``CancelledError`` it raised). ``KeyboardInterrupt`` and ``SystemExit``
    propagate to the caller. Must be called with a running event loop.
    """
    loop = asyncio.get_running_loop()
    if not asyncio.iscoroutine(coro):  # a future or another awaitable: nothing to start
        return asyncio.ensure_future(coro)
    try:
        yielded = coro.send(None)
    except StopIteration as stop:
        done: asyncio.Future[T] = loop.create_future()
        done.set_result(stop.value)
        return done
    except asyncio.CancelledError:
        cancelled: asyncio.Future[T] = loop.create_future()
        cancelled.cancel()
        return cancelled
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        failed: asyncio.Future[T] = loop.create_future()
        failed.set_exception(exc)
        return failed
    return asyncio.ensure_future(_carry_on(coro, yielded))


async def _carry_on(coro: Coroutine[Any, Any, T], yielded: Any) -> T:
    return await _Resume(coro, yielded)


class _Resume:
    """An awaitable that hands the task what ``coro`` waits for and feeds back what the task sends
    or throws, until ``coro`` returns (a coroutine driven by hand, from its second step on)."""

    def __init__(self, coro: Coroutine[Any, Any, Any], yielded: Any) -> None:
        self._coro = coro
        self._yielded = yielded

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, yielded = self._coro, self._yielded
        while True:
            try:
                sent = yield yielded
            except BaseException as exc:  # cancellation and the like go to the coroutine
                try:
                    yielded = coro.throw(exc)
                except StopIteration as stop:
                    return stop.value
                continue
            try:
                yielded = coro.send(sent)
            except StopIteration as stop:
                return stop.value
