"""Helpers shared by the bash tests: a session environment with a registry, and one-call runners."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path

from pi_lsp.agent.tool import ToolContext, ToolError, ToolResult
from pi_lsp.tools.bash import BashArgs, BashTool
from pi_lsp.tools.environment import ToolEnvironment, ToolSettings
from pi_lsp.tools.shell.processes import ProcessRegistry

BOUND = 5.0
"""The issue's bound for supervision tests, in seconds."""


def small_settings(**overrides: float | None) -> ToolSettings:
    """Settings with every timeout small, as the tests need them."""
    values: dict = dict(
        bash_timeout_seconds=30.0,
        bash_kill_grace_seconds=0.3,
        bash_idle_drain_seconds=0.1,
        bash_update_interval_seconds=0.1,
    )
    values.update(overrides)
    return ToolSettings(**values)


def make_env(root: Path, *, registry: bool = True, **overrides: float | None) -> ToolEnvironment:
    """A session in ``root/work`` with its temp folder ``root/tmp``."""
    cwd = root / "work"
    cwd.mkdir(exist_ok=True)
    settings = small_settings(**overrides)
    processes = ProcessRegistry(kill_grace_seconds=settings.bash_kill_grace_seconds) if registry else None
    return ToolEnvironment(
        cwd=cwd, files=None, temp_dir=root / "tmp", processes=processes, settings=settings  # type: ignore[arg-type]
    )


@dataclass
class Outcome:
    """One bash call: ``text`` of the result or error, ``is_error``, updates, seconds taken."""

    text: str
    is_error: bool
    details: object = None
    updates: list[ToolResult] = field(default_factory=list)
    seconds: float = 0.0


async def run_bash(env: ToolEnvironment, command: str, timeout: float | None = None) -> Outcome:
    """Run one call to completion and capture what the model and the UI would see."""
    updates: list[ToolResult] = []
    ctx = ToolContext("call-1", on_update=updates.append)
    start = time.monotonic()
    try:
        result = await BashTool(env).execute(BashArgs(command=command, timeout=timeout), ctx)
    except ToolError as exc:
        return Outcome(exc.message, True, exc.details, updates, time.monotonic() - start)
    text = result.content[0].text  # type: ignore[union-attr]
    return Outcome(text, False, result.details, updates, time.monotonic() - start)


async def wait_until(predicate, bound: float = BOUND) -> bool:
    """Poll ``predicate()`` until true or ``bound`` seconds passed; returns its last value."""
    end = time.monotonic() + bound
    while time.monotonic() < end:
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return bool(predicate())
