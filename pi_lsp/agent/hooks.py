"""``before_tool_call`` / ``after_tool_call`` hooks (design.md section 2 steps 4 and 6, pi-behaviour.md 4.5).

Hooks are coroutines registered on the :class:`~pi_lsp.agent.pipeline.ToolPipeline`: policy first,
then extensions in registration order.

- **before** hooks run after validation. Each gets the validated ``args`` (the args model
  instance): it may change its attributes in place (the tool receives them, with no re-validation,
  as in Pi) or block the call with :class:`BeforeToolCallResult` ``(block=True, reason=...)``. A block
  stops the chain; the call's result is an error with ``reason`` (``Tool execution was blocked`` when
  empty). A hook that raises blocks the call with its message.
- **after** hooks run after the tool, also after it failed, and chain like middleware: each sees the
  result as patched by the earlier ones and may return :class:`AfterToolCallResult` whose given
  fields replace the current ones wholesale. A hook that raises replaces the result with an error
  result carrying its message; the remaining after hooks are skipped.

Hooks are not called for results the pipeline makes itself (tool not found, invalid arguments,
blocked, aborted before running, the ``length`` rule).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from pi_lsp.agent.tool import AbortSignal, Tool, ToolError, ToolResult
from pi_lsp.llm.types import ResultContent, ToolCall

BLOCKED_MESSAGE = "Tool execution was blocked"
"""Pi's text for a block without a reason."""


class _Unset:
    """Marker for "not given" where ``None`` is a real value (``details``)."""

    _instance: "_Unset | None" = None

    def __new__(cls) -> "_Unset":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Any = _Unset()
"""The default of :attr:`AfterToolCallResult.details`: keep the current details."""


@dataclass
class BeforeToolCallContext:
    """What a before hook sees.

    ``tool_call`` is the call as the model sent it (un-prepared arguments); ``args`` the validated
    args model instance the tool will receive; ``session_id`` the agent session (``"external"`` for
    ``pi/executeToolCall``).
    """

    tool_call: ToolCall
    tool: Tool
    args: BaseModel
    session_id: str


@dataclass
class BeforeToolCallResult:
    """A before hook's verdict: ``block=True`` stops the call with ``reason`` as its error text."""

    block: bool = False
    reason: str | None = None


@dataclass
class AfterToolCallContext:
    """What an after hook sees: the call, its args, the current ``result`` and ``is_error``."""

    tool_call: ToolCall
    tool: Tool
    args: BaseModel
    result: ToolResult
    is_error: bool
    session_id: str


@dataclass
class AfterToolCallResult:
    """A patch to the result: each field given replaces the current one wholesale.

    ``content=None`` keeps the content; ``details`` left at :data:`UNSET` keeps the details (``None``
    clears them); ``is_error=None`` keeps the flag.
    """

    content: list[ResultContent] | None = None
    details: Any = UNSET
    is_error: bool | None = None


BeforeToolCall = Callable[[BeforeToolCallContext, AbortSignal], Awaitable[BeforeToolCallResult | None]]
"""``async def hook(ctx, signal) -> BeforeToolCallResult | None``."""

AfterToolCall = Callable[[AfterToolCallContext, AbortSignal], Awaitable[AfterToolCallResult | None]]
"""``async def hook(ctx, signal) -> AfterToolCallResult | None``."""


def apply_after_result(
    result: ToolResult, is_error: bool, patch: AfterToolCallResult | None
) -> tuple[ToolResult, bool]:
    """The result and error flag after ``patch`` (unchanged for ``None``)."""
    if patch is None:
        return result, is_error
    content = result.content if patch.content is None else list(patch.content)
    details = result.details if patch.details is UNSET else patch.details
    flag = is_error if patch.is_error is None else bool(patch.is_error)
    return ToolResult(content=content, details=details), flag


def hook_error_message(exc: BaseException) -> str:
    """The text of a hook's exception: ``ToolError.message``, else ``str(exc)``, else the class name."""
    if isinstance(exc, ToolError):
        return exc.message
    return str(exc) or type(exc).__name__


def bug_message(exc: BaseException) -> str:
    """The text of a tool's unexpected (non-``ToolError``) exception: ``"{ClassName}: {text}"``.

    The class name alone when the text is empty; an unexpected exception is a bug and its type helps.
    """
    text = str(exc)
    name = type(exc).__name__
    return f"{name}: {text}" if text else name
