"""The tool pipeline: one tool call or one batch in, correlated ToolResultMessages out (design.md section 2).

Per call (Pi's ``prepareToolCall`` + ``executePreparedToolCall``, pi-behaviour.md 4.3-4.9):

1. ``tool_execution_start`` is emitted; the tool is looked up by exact name among the **active**
   tools (``Tool {name} not found`` otherwise, followed for a registered but inactive tool by
   :attr:`ToolPipeline.inactive_hint`'s words, where the face that owns the pipeline gives some);
2. ``prepare_arguments`` (edit's legacy shim);
3. coercion and validation (:mod:`pi_lsp.agent.validation`), Pi's ``Validation failed ...`` text;
4. before hooks (:mod:`pi_lsp.agent.hooks`), then the abort check (``Operation aborted``);
5. ``execute`` with a :class:`ToolContext`, in its own task from its first wait on
   (:mod:`pi_lsp.agent.eager`: a call that never waits needs no task); an abort cancels that task: a tool that
   turns the cancellation into a ``ToolError`` gives that message, otherwise ``Operation aborted``;
   a ``ToolError`` is the error text; any other exception is logged with its traceback and becomes
   ``"{ClassName}: {message}"``;
6. after hooks; ``tool_execution_end``; the :class:`ToolResultMessage`. Errors the pipeline makes
   carry ``details: {}`` as Pi's loop does; a ``ToolError``'s own ``details`` are kept.

Batches (the calls of one assistant message): preflight (steps 1-4) one call at a time in source
order, then the prepared calls run concurrently, or one after another when any call targets a tool
with ``execution_mode == "sequential"``. ``tool_execution_end`` events come in completion order, the
returned results in **source order** (duplicate ids are fine: results correlate by position). With
``stop_reason == "length"`` nothing runs and every call gets Pi's "was not executed" error.

Cancellation never loses a result: an aborted ``signal`` or the cancellation of the coroutine that
awaits :meth:`ToolPipeline.execute_batch` (a ``$/cancelRequest``) aborts the running calls, and the
coroutine still returns one ToolResultMessage per call. The pipeline emits only the tool events; the
agent loop emits ``message_start``/``message_end`` for the returned results.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Coroutine, Sequence
from types import CoroutineType
from typing import Any, TypeVar

from pydantic import BaseModel

from pi_lsp.agent import events
from pi_lsp.agent.eager import CANCELLED, RAISED, RETURNED, WAITING, first_step, settled_state
from pi_lsp.agent.hooks import (
    BLOCKED_MESSAGE,
    AfterToolCall,
    AfterToolCallContext,
    BeforeToolCall,
    BeforeToolCallContext,
    apply_after_result,
    bug_message,
    hook_error_message,
)
from pi_lsp.agent.tool import ABORTED_MESSAGE, AbortSignal, Tool, ToolContext, ToolError, ToolResult
from pi_lsp.agent.validation import validator_for
from pi_lsp.llm.types import StopReason, TextContent, ToolCall, ToolResultMessage, tool_result_message

logger = logging.getLogger(__name__)

LENGTH_MESSAGE = (
    'Tool call "{name}" was not executed: the response hit the output token limit, so its arguments '
    "may be truncated. Re-issue the tool call with complete arguments."
)
"""Pi's error for every call of an assistant message that stopped with ``length`` (pi-behaviour.md 4.7)."""

T = TypeVar("T")


class _Failed(Exception):
    """An immediate outcome of preflight: the call gets ``message`` as its error result."""

    def __init__(self, message: str, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = {} if details is None else details


class ToolPipeline:
    """The registered tools of a session, which of them are active, the hooks, and call execution.

    ``tools`` maps names to tools (every registered tool); only active ones can be called. ``active``
    ``None`` makes every given tool active (the agent layer does not know Pi's default set; callers
    pass ``pi_lsp.tools.DEFAULT_ACTIVE_TOOLS``). Raises ``ValueError`` for duplicate tool names or
    unknown active names.
    """

    def __init__(self, tools: Sequence[Tool], active: Sequence[str] | None = None) -> None:
        self.tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self.tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self.tools[tool.name] = tool
        self._active: list[str] = []
        self.set_active(list(self.tools) if active is None else active)
        # (hook, the tool names it applies to or None for all), in running order
        self._before: tuple[tuple[BeforeToolCall, frozenset[str] | None], ...] = ()
        self._before_first = 0
        self._after: tuple[tuple[AfterToolCall, frozenset[str] | None], ...] = ()
        self._hooks_of: dict[str, tuple[tuple[BeforeToolCall, ...], tuple[AfterToolCall, ...]]] = {}
        self.inactive_hint: Callable[[str, list[str]], str] | None = None
        """``(name, active names) -> text`` appended (after a space) to Pi's ``Tool {name} not
        found`` when ``name`` is registered but not active: how the user makes it active
        (``--tools`` for ``pi-lsp exec``, ``pi.activeTools`` in an editor). ``None``: Pi's text alone."""

    @property
    def active_names(self) -> list[str]:
        """Names of the active tools, in activation order."""
        return list(self._active)

    def set_active(self, names: Sequence[str]) -> list[str]:
        """Make exactly ``names`` active (duplicates dropped); returns the active names.

        Raises ``ValueError`` naming every unknown tool (design.md section 7: never ignored silently);
        the active set is then unchanged.
        """
        unknown = [name for name in names if name not in self.tools]
        if unknown:
            raise ValueError("Unknown tools: " + ", ".join(unknown))
        self._active = list(dict.fromkeys(names))
        return self.active_names

    def add_before_hook(
        self, hook: BeforeToolCall, *, first: bool = False, tools: Collection[str] | None = None
    ) -> None:
        """Register a before hook; ``first=True`` (policy) puts it before every non-first hook,
        after earlier ``first`` hooks. ``tools``: the names of the only tools whose calls it sees
        (``None``: every call); a hook that ignores other tools' calls says so here and costs them
        nothing."""
        entry = (hook, None if tools is None else frozenset(tools))
        if first:
            index = self._before_first
            self._before = (*self._before[:index], entry, *self._before[index:])
            self._before_first += 1
        else:
            self._before = (*self._before, entry)
        self._hooks_of.clear()

    def add_after_hook(self, hook: AfterToolCall, *, tools: Collection[str] | None = None) -> None:
        """Register an after hook (they chain in registration order); ``tools`` as for
        :meth:`add_before_hook`."""
        self._after = (*self._after, (hook, None if tools is None else frozenset(tools)))
        self._hooks_of.clear()

    def execute(
        self,
        call: ToolCall,
        *,
        signal: AbortSignal | None = None,
        session_id: str = "external",
        emit: events.EventSink | None = None,
    ) -> Coroutine[Any, Any, ToolResultMessage]:
        """Run one call through every step: ``await`` it for the call's ToolResultMessage (never
        raises for the call's failures or its cancellation). The batch of one call, as
        :meth:`execute_batch` runs it, without a coroutine of its own (issue 21)."""
        return self._run([call], None, signal, session_id, emit, single=True)  # type: ignore[return-value]

    def execute_batch(
        self,
        calls: Sequence[ToolCall],
        *,
        stop_reason: StopReason | None = None,
        signal: AbortSignal | None = None,
        session_id: str = "external",
        emit: events.EventSink | None = None,
    ) -> Coroutine[Any, Any, list[ToolResultMessage]]:
        """Run the calls of one assistant message: ``await`` it for one result per call, in source
        order (``calls`` is copied when this is called)."""
        calls = list(calls)
        if not calls:
            return _no_results()
        return self._run(calls, stop_reason, signal, session_id, emit, single=False)  # type: ignore[return-value]

    async def _run(
        self,
        calls: list[ToolCall],
        stop_reason: StopReason | None,
        signal: AbortSignal | None,
        session_id: str,
        emit: events.EventSink | None,
        *,
        single: bool,
    ) -> list[ToolResultMessage] | ToolResultMessage:
        """:meth:`execute_batch` of ``calls`` (not empty); with ``single``, the result of the only call."""
        batch_signal = AbortSignal()
        unlink = None
        if signal is not None:
            unlink = signal.on_abort(lambda: batch_signal.abort(signal.reason))
        run = _BatchRun(self, calls, batch_signal, session_id, emit)
        state, work = first_step(run.run(stop_reason))  # a small call is often done here, without a task
        try:
            if state == RETURNED:
                return work[0] if single else work  # type: ignore[no-any-return]
            if state == RAISED:
                raise work
            if state == CANCELLED:
                raise asyncio.CancelledError
            while True:
                try:
                    results = await asyncio.shield(work)
                    return results[0] if single else results  # type: ignore[no-any-return]
                except asyncio.CancelledError:
                    if work.cancelled():
                        raise
                    # our awaiter was cancelled ($/cancelRequest): abort the calls, keep the results
                    batch_signal.abort("cancelled")
                    task = asyncio.current_task()
                    if task is not None:
                        task.uncancel()
        finally:
            if unlink is not None:
                unlink()

    # -- used by _BatchRun ------------------------------------------------------------------

    def _hooks(self, name: str) -> tuple[tuple[BeforeToolCall, ...], tuple[AfterToolCall, ...]]:
        """The before and after hooks of a call of tool ``name``, in order (computed once per
        tool name and registration, so a call neither filters nor copies them)."""
        hooks = self._hooks_of.get(name)
        if hooks is None:
            hooks = self._hooks_of[name] = (
                tuple(hook for hook, tools in self._before if tools is None or name in tools),
                tuple(hook for hook, tools in self._after if tools is None or name in tools),
            )
        return hooks

    def _not_found(self, name: str) -> str:
        """Pi's error for a tool that is not active, with :attr:`inactive_hint` where it applies."""
        text = f"Tool {name} not found"
        if self.inactive_hint is not None and name in self.tools:
            text += " " + self.inactive_hint(name, self.active_names)
        return text

    def _lookup(self, name: str) -> Tool | None:
        return self.tools.get(name) if name in self._active else None


async def _no_results() -> list[ToolResultMessage]:
    return []


def _error_message(call: ToolCall, text: str, details: Any) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id=call.id,
        tool_name=call.name,
        content=[TextContent(text=text)],
        details={} if details is None else details,
        is_error=True,
    )


class _BatchRun:
    """One batch in flight: its calls, their preflight outcomes and their results."""

    def __init__(
        self,
        pipeline: ToolPipeline,
        calls: list[ToolCall],
        signal: AbortSignal,
        session_id: str,
        emit: events.EventSink | None,
    ) -> None:
        self.pipeline = pipeline
        self.calls = calls
        self.signal = signal
        self.session_id = session_id
        self._sink = emit
        self.results: list[ToolResultMessage | None] = [None] * len(calls)

    def emit(self, event: dict[str, Any]) -> None:
        if self._sink is None:
            return
        try:
            self._sink(event)
        except Exception:  # a sink must never break a call
            logger.exception("event sink failed on %s", event.get("type"))

    def emit_start(self, call: ToolCall) -> None:
        """Emit the ``tool_execution_start`` of ``call`` (built only when a sink listens)."""
        if self._sink is not None:
            self.emit(events.tool_execution_start(call.id, call.name, call.arguments))

    def finish(self, index: int, message: ToolResultMessage) -> None:
        """Record the final result of call ``index`` and emit its ``tool_execution_end``."""
        self.results[index] = message
        if self._sink is not None:  # the event serialises the result: only for a listener
            self.emit(
                events.tool_execution_end(
                    message.tool_call_id,
                    message.tool_name,
                    ToolResult(content=list(message.content), details=message.details),
                    message.is_error,
                )
            )

    async def run(self, stop_reason: StopReason | None) -> list[ToolResultMessage]:
        if stop_reason == "length":
            for index, call in enumerate(self.calls):
                self.emit_start(call)
                self.finish(index, _error_message(call, LENGTH_MESSAGE.format(name=call.name), None))
            return self._collected()
        if len(self.calls) == 1:  # one call: nothing to order or gather
            prepared = await self.preflight(0)
            if prepared is not None:
                await self.execute(0, *prepared)
            return [self.results[0]]  # type: ignore[list-item]
        sequential = False
        for call in self.calls:
            tool = self.pipeline._lookup(call.name)
            if tool is not None and getattr(tool, "execution_mode", "parallel") == "sequential":
                sequential = True
                break
        if sequential:
            for index in range(len(self.calls)):
                prepared = await self.preflight(index)
                if prepared is not None:
                    await self.execute(index, *prepared)
        else:
            ready: list[tuple[int, Tool, BaseModel]] = []
            for index in range(len(self.calls)):
                prepared = await self.preflight(index)
                if prepared is not None:
                    ready.append((index, *prepared))
            if len(ready) == 1:
                await self.execute(*ready[0])
            else:
                await asyncio.gather(*(self.execute(index, tool, args) for index, tool, args in ready))
        return self._collected()

    def _collected(self) -> list[ToolResultMessage]:
        assert all(result is not None for result in self.results)
        return [result for result in self.results if result is not None]

    async def preflight(self, index: int) -> tuple[Tool, BaseModel] | None:
        """Steps 1-4 for call ``index``: the tool and its args, or ``None`` after finishing it."""
        call = self.calls[index]
        if self._sink is not None:
            self.emit_start(call)
        try:
            if self.signal.aborted:
                raise _Failed(ABORTED_MESSAGE)
            tool = self.pipeline._lookup(call.name)
            if tool is None:
                raise _Failed(self.pipeline._not_found(call.name))
            if call.arguments_error is not None:  # Pi 1.x: finished arguments that are not JSON
                raise _Failed(f'Invalid arguments for tool "{call.name}": {call.arguments_error}')
            prepared = self.prepare(tool, call.arguments)
            try:
                args = validator_for(tool.args_model).validate(tool.name, prepared)
            except ToolError as exc:
                raise _Failed(exc.message) from None
            for hook in self.pipeline._hooks(call.name)[0]:  # the before chain (a hook blocks by raising _Failed)
                state, verdict = first_step(hook(BeforeToolCallContext(call, tool, args, self.session_id), self.signal))
                if state == WAITING:
                    state, verdict = await self.settle(verdict)
                if state == RAISED:
                    if not isinstance(verdict, Exception):
                        raise verdict
                    raise _Failed(hook_error_message(verdict))
                if state == CANCELLED:
                    raise _Failed(ABORTED_MESSAGE)
                if verdict is not None and verdict.block:
                    raise _Failed(verdict.reason or BLOCKED_MESSAGE)
            if self.signal.aborted:
                raise _Failed(ABORTED_MESSAGE)
            return tool, args
        except _Failed as failed:
            self.finish(index, _error_message(call, failed.message, failed.details))
        except Exception as exc:  # a bug in a tool's prepare or in the pipeline itself
            logger.exception("preflight of tool call %s (%s) failed", call.id, call.name)
            self.finish(index, _error_message(call, bug_message(exc), None))
        return None

    def prepare(self, tool: Tool, raw: Any) -> Any:
        prepare = getattr(tool, "prepare_arguments", None)
        if prepare is None:
            return raw
        try:
            return prepare(raw)
        except ToolError as exc:
            raise _Failed(exc.message, exc.details) from None

    async def settle(self, task: asyncio.Future[T]) -> tuple[int, Any]:
        """Wait for the task of a hook or a tool that waits (:func:`~pi_lsp.agent.eager.first_step`
        gave ``WAITING``), cancelling it if the batch is aborted first.

        Returns its outcome as :func:`~pi_lsp.agent.eager.settled_state` gives it: ``(RETURNED,
        value)``, ``(RAISED, exception)`` or ``(CANCELLED, None)``. (A hook or tool that never
        waits runs without a task, a future or this coroutine.)
        """
        remove = self.signal.on_abort(_canceller(task))  # abort = cancel its task
        try:
            await asyncio.wait({task})
        finally:
            remove()
        return settled_state(task)

    async def execute(self, index: int, tool: Tool, args: BaseModel) -> None:
        """Steps 5-7 for a prepared call; never raises."""
        call = self.calls[index]
        on_update = None
        settled = False
        if self._sink is not None:  # nobody listens: no updates to make

            def on_update(partial: ToolResult) -> None:
                if not settled:  # updates after the tool settled are ignored, as in Pi
                    self.emit(events.tool_execution_update(call.id, call.name, call.arguments, partial))

        context = ToolContext(call.id, self.signal, on_update, self.session_id)
        try:
            try:
                running = tool.execute(args, context)  # an async def's coroutine: run as it is
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # an execute that is not an async def raised: as if it had awaited
                running = _raising(exc)
            if type(running) is not CoroutineType:  # an awaitable of another kind: awaited in a coroutine
                running = _awaited(running)
            state, value = first_step(running)
            if state == WAITING:
                state, value = await self.settle(value)
        finally:
            settled = True
        result, is_error = self.outcome(call, state, value)
        if self.pipeline._hooks(call.name)[1]:
            result, is_error = await self.after_hooks(call, tool, args, result, is_error)
        self.finish(index, tool_result_message(call.id, call.name, result.content, result.details, is_error))

    def outcome(self, call: ToolCall, state: int, value: Any) -> tuple[ToolResult, bool]:
        """The result and ``is_error`` of a tool's run in :func:`~pi_lsp.agent.eager.first_step` form."""
        if state == CANCELLED:
            return ToolResult.text(ABORTED_MESSAGE, details={}), True
        if state != RAISED:
            if isinstance(value, ToolResult):
                return value, False
            value = TypeError(f"tool returned {type(value).__name__}, not ToolResult")
        if isinstance(value, ToolError):
            return ToolResult.text(value.message, details={} if value.details is None else value.details), True
        logger.error("tool %s (call %s) raised", call.name, call.id, exc_info=value)
        return ToolResult.text(bug_message(value), details={}), True

    async def after_hooks(
        self, call: ToolCall, tool: Tool, args: BaseModel, result: ToolResult, is_error: bool
    ) -> tuple[ToolResult, bool]:
        for hook in self.pipeline._hooks(call.name)[1]:
            context = AfterToolCallContext(call, tool, args, result, is_error, self.session_id)
            try:
                patch = await hook(context, self.signal)
            except Exception as exc:
                logger.warning("after_tool_call hook failed for %s: %s", call.name, exc)
                return ToolResult.text(hook_error_message(exc), details={}), True
            result, is_error = apply_after_result(result, is_error, patch)
        return result, is_error


def _canceller(task: asyncio.Future[Any]) -> Callable[[], None]:
    """An abort callback that cancels ``task`` on the next loop step, so a tool that aborts the
    signal itself and then returns keeps its result (as with Pi's listener, which runs later)."""
    return lambda: task.get_loop().call_soon(task.cancel)


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable


async def _raising(exc: BaseException) -> Any:
    raise exc
