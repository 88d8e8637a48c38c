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
import collections.abc
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")


RETURNED = 0
"""A :func:`first_step` state: the coroutine returned; the payload is its value."""
RAISED = 1
"""A :func:`first_step` state: the coroutine raised; the payload is the exception."""
CANCELLED = 2
"""A :func:`first_step` state: the coroutine raised ``CancelledError``; the payload is ``None``."""
WAITING = 3
"""A :func:`first_step` state: the coroutine waits; the payload is a task running the rest."""


def first_step(coro: Coroutine[Any, Any, T]) -> tuple[int, Any]:
    """Run ``coro`` up to its first wait; ``(state, payload)``, without a future when it finished.

    ``(RETURNED, value)``, ``(RAISED, exception)``, ``(CANCELLED, None)`` for a coroutine that
    finished in that step; ``(WAITING, task)`` otherwise, the task carrying on exactly where the
    coroutine stopped. ``KeyboardInterrupt`` and ``SystemExit`` propagate to the caller. Must be
    called with a running event loop (for the task). The pipeline's per-call steps use this so a
    call that never waits creates no future at all (issue 21).
    """
    try:
        yielded = coro.send(None)
    except StopIteration as stop:
        return RETURNED, stop.value
    except asyncio.CancelledError:
        return CANCELLED, None
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:
        return RAISED, exc
    return WAITING, asyncio.ensure_future(_Continuation(coro, yielded))


def settled_state(task: asyncio.Future[Any]) -> tuple[int, Any]:
    """The :func:`first_step` form of a finished ``task``: ``RETURNED``, ``RAISED`` or ``CANCELLED``."""
    if task.cancelled():
        return CANCELLED, None
    exc = task.exception()
    return (RETURNED, task.result()) if exc is None else (RAISED, exc)


def eager_future(
    coro: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop | None = None
) -> asyncio.Future[T]:
    """Run ``coro`` up to its first wait; a done future with its outcome, or a task running the rest.

    The outcome of a coroutine that finished in that step is the future's result, exception or
    cancellation (a ``CancelledError`` it raised). ``KeyboardInterrupt`` and ``SystemExit``
    propagate to the caller. Must be called with a running event loop; ``loop`` is that loop
    when the caller has it at hand (Python 3.11's ``asyncio.get_running_loop`` makes a
    ``getpid`` system call each time).
    """
    if not asyncio.iscoroutine(coro):  # a future or another awaitable: nothing to start
        return asyncio.ensure_future(coro)
    state, payload = first_step(coro)
    if state == WAITING:
        return payload  # type: ignore[no-any-return]
    if loop is None:
        loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    if state == RETURNED:
        done.set_result(payload)
    elif state == RAISED:
        done.set_exception(payload)
    else:
        done.cancel()
    return done


class _Continuation(collections.abc.Coroutine):  # type: ignore[type-arg]
    """``coro`` after its first step, as a coroutine a task can drive: its first ``send`` hands
    the task what ``coro`` waits for; everything else (sends, throws, close) goes to ``coro``. A
    cancellation before the task's first step reaches ``coro`` too, which has already started."""

    def __init__(self, coro: Coroutine[Any, Any, Any], yielded: Any) -> None:
        self._coro = coro
        self._first: tuple[Any] | None = (yielded,)

    def send(self, value: Any) -> Any:
        if self._first is not None:
            (yielded,), self._first = self._first, None
            return yielded
        return self._coro.send(value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        self._first = None
        if val is None and tb is None:
            return self._coro.throw(typ)
        return self._coro.throw(typ, val, tb)

    def close(self) -> None:
        self._first = None
        self._coro.close()

    def __await__(self) -> Generator[Any, Any, Any]:
        try:
            yielded = self.send(None)
            while True:
                try:
                    sent = yield yielded
                except BaseException as exc:  # noqa: BLE001 - handed on, as a coroutine would
                    yielded = self.throw(exc)
                else:
                    yielded = self.send(sent)
        except StopIteration as stop:
            return stop.value
