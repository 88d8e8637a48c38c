"""The tool contract between the agent core and the tools (Pi's ``AgentTool``, pi-behaviour.md 1.1).

A tool is *data about itself* (name, label, description, the JSON Schema sent to models) plus an
``execute`` coroutine. Failure convention, as in Pi: a tool fails by **raising** :class:`ToolError`
with the model-facing message; the pipeline turns it into ``isError: true`` with that message as the
only text block. Any other exception is a bug: the pipeline logs it with its traceback and returns it
as an error result.

Cancellation is asyncio cancellation: the pipeline runs ``execute`` in its own task and cancels that
task when the call is aborted. A tool that has something to say on abort (bash: the output so far
and ``Command aborted``) catches :class:`asyncio.CancelledError`, cleans up and raises
:class:`ToolError`; a tool that simply lets the cancellation propagate gets ``Operation aborted``.
Code that must not be interrupted (the edit's apply-verify-save section) wraps itself in
:func:`asyncio.shield` and reports what happened.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel

from pi_lsp.llm.types import ResultContent, text_content

ABORTED_MESSAGE = "Operation aborted"
"""Pi's model-facing text for a call cancelled before or while it ran (pi-behaviour.md 1.5)."""


class ToolError(Exception):
    """A failure the model should read: ``message`` becomes the error result's only text block.

    Raised by tools (never returned). ``details`` is optional UI data kept on the result.
    """

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


@dataclass
class ToolResult:
    """What a tool returns on success: ``content`` for the model, ``details`` for the UI.

    ``content`` holds text and image blocks; ``details`` is any JSON value or ``None`` (Pi's
    ``undefined``).
    """

    content: list[ResultContent]
    details: Any = None

    @classmethod
    def text(cls, text: str, details: Any = None) -> "ToolResult":
        """A result with one text block."""
        return cls(content=[text_content(text)], details=details)


OnUpdate = Callable[[ToolResult], None]
"""Partial-result callback (``tool_execution_update``). Must not raise; may be called often."""


class AbortSignal:
    """A cancellation flag shared by a run, its provider stream and its tool calls.

    ``abort()`` is idempotent; ``aborted`` reads the flag; ``wait()`` returns when it is set. The
    pipeline watches it and cancels running tool tasks; tools rarely need it directly.
    """

    __slots__ = ("_aborted", "_event", "reason", "_callbacks")

    def __init__(self) -> None:
        self._aborted = False
        self._event: asyncio.Event | None = None  # made by the first wait(): most signals are never awaited
        self.reason: str | None = None
        self._callbacks: list[Callable[[], None]] = []

    @property
    def aborted(self) -> bool:
        """True once :meth:`abort` was called."""
        return self._aborted

    def abort(self, reason: str | None = None) -> None:
        """Set the flag (first reason wins) and run the :meth:`on_abort` callbacks once, in order."""
        if not self._aborted:
            self._aborted = True
            self.reason = reason
            if self._event is not None:
                self._event.set()
            callbacks, self._callbacks = self._callbacks, []
            for callback in callbacks:
                callback()

    def on_abort(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback()`` synchronously when the signal aborts (now, if it already has).

        Returns a function that unregisters it. Cheaper than a task awaiting :meth:`wait`; the
        pipeline uses it to cancel running tool tasks. ``callback`` must not raise.
        """
        if self._aborted:
            callback()
            return _nothing
        self._callbacks.append(callback)

        def remove() -> None:
            try:
                self._callbacks.remove(callback)
            except ValueError:
                pass

        return remove

    async def wait(self) -> None:
        """Return when the signal is aborted."""
        if self._aborted:
            return
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()


def _nothing() -> None:
    return None


@dataclass
class ToolContext:
    """Per-call context handed to :meth:`Tool.execute`.

    ``signal`` is the call's abort signal (already watched by the pipeline); ``on_update`` sends
    partial results; ``session_id`` names the agent session (``"external"`` for calls from
    ``pi/executeToolCall``) so session-scoped state (read buffer versions, approvals) can be kept.
    """

    tool_call_id: str
    signal: AbortSignal = field(default_factory=AbortSignal)
    on_update: OnUpdate | None = None
    session_id: str = "external"

    def update(self, result: ToolResult) -> None:
        """Send a partial result if anyone listens."""
        if self.on_update is not None:
            self.on_update(result)


@runtime_checkable
class Tool(Protocol):
    """A tool the pipeline can run.

    Attributes:
        name: the exact, case-sensitive name models call (``read``, ``bash`` ...).
        label: a short UI label (Pi uses the name).
        description: the model-facing manual (the peer's text for the built-ins).
        args_model: the pydantic model of the arguments. The pipeline coerces and validates raw
            arguments against it (design.md section 2, step 3) and hands ``execute`` an instance.
            Its config says whether the object is closed (``extra="forbid"``, edit) or open
            (``extra="ignore"``, the others), as the peer's schemas do.
        parameters: the JSON Schema sent to models, derived from ``args_model`` by
            :func:`pi_lsp.agent.schema.json_schema_of` (inlined: no ``$ref``, no ``title``,
            optional means "not in ``required``"); equal to the peer's schema for the built-ins.
        execution_mode: ``"parallel"`` (all built-ins) or ``"sequential"``; one sequential call
            makes its whole batch sequential (pi-behaviour.md 4.6).
    """

    name: str
    label: str
    description: str
    args_model: type[BaseModel]
    parameters: dict[str, Any]
    execution_mode: Literal["parallel", "sequential"]

    def prepare_arguments(self, raw: Any) -> Any:
        """Fix up raw arguments before validation (edit's legacy shim); identity otherwise."""
        ...

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        """Run with validated ``args`` (an ``args_model`` instance; before-hooks may have changed
        its attributes, without re-validation, as in Pi); raise :class:`ToolError` to fail."""
        ...


def describe_tool(tool: Tool, active: bool) -> dict[str, Any]:
    """A tool's listing entry: ``{name, label, description, parameters, active}`` (``parameters`` is
    its JSON Schema in TypeBox shape); what ``pi/listTools`` and the MCP face show."""
    return {
        "name": tool.name,
        "label": tool.label,
        "description": tool.description,
        "parameters": tool.parameters,
        "active": active,
    }
