"""Small real tools for pipeline tests (the pipeline itself is under test, not these)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pi_lsp.agent.schema import json_schema_of
from pi_lsp.agent.tool import ToolContext, ToolResult
from pi_lsp.llm.types import ToolCall


class EchoArgs(BaseModel):
    """Open object: unknown keys ignored."""

    text: str = Field(description="Text to echo")
    times: float | None = Field(default=None, description="Repeat count")


class ClosedArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: str = Field(description="A value")


Run = Callable[[Any, ToolContext], Awaitable[ToolResult]]


@dataclass
class FakeTool:
    """A tool whose ``execute`` is the given coroutine function; records what it received."""

    name: str
    run: Run
    args_model: type[BaseModel] = EchoArgs
    execution_mode: Literal["parallel", "sequential"] = "parallel"
    prepare: Callable[[Any], Any] | None = None
    label: str = ""
    description: str = "a test tool"
    parameters: dict[str, Any] = field(default_factory=dict)
    received: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.label = self.label or self.name
        self.parameters = json_schema_of(self.args_model)

    def prepare_arguments(self, raw: Any) -> Any:
        return raw if self.prepare is None else self.prepare(raw)

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        self.received.append(args)
        return await self.run(args, ctx)


async def echo(args: EchoArgs, ctx: ToolContext) -> ToolResult:
    count = int(args.times or 1)
    return ToolResult.text(args.text * count, details={"count": count})


def sleeper(seconds: float, log: list[str], label: str) -> Run:
    """A run that logs start/end around a sleep (to observe overlap)."""

    async def run(args: Any, ctx: ToolContext) -> ToolResult:
        log.append(f"start {label}")
        await asyncio.sleep(seconds)
        log.append(f"end {label}")
        return ToolResult.text(label)

    return run


def call(name: str, arguments: Any = None, call_id: str = "c1") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments={} if arguments is None else arguments)
