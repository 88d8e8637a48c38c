"""Diagnostics after ``edit`` and ``write``: the problems a change introduced, in its own result (issue 17).

A before/after hook pair the daemon registers on its pipeline (KNOWLEDGE_SPEC, "What pi-lsp does
with them"):

1. **before** the change (after the policy allowed it): pull the file's diagnostics
   (``pi/diagnostics``) and note its ``pi/diagnosticsChanged`` count;
2. **after** it landed (applied, verified, saved; only for a successful result): unless the
   before-pull said no language server is attached (``servers: []``), wait for a change report
   naming the file after that count, then until none came for ``quietSeconds``, all bounded by
   ``settleSeconds`` (reports the editor dated to a version before the change's do not count: a
   late report about the old text must not pass for the server's check of the new); pull again;
3. append the problems this change **introduced** (:func:`~pi_lsp.tools.language.problems.
   introduced`), errors first, capped at ``maxItems`` and :data:`MAX_CHARS` with a notice; then,
   briefly, problems earlier changes of this session introduced that are still there (each is
   reminded once, then left to the ``diagnostics`` tool).

Nothing is appended when the change introduced nothing and nothing earlier is left. Failures to
ask the editor never fail the edit: the result simply gets no diagnostics.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pi_lsp.agent.hooks import AfterToolCallContext, AfterToolCallResult, BeforeToolCallContext
from pi_lsp.agent.tool import AbortSignal
from pi_lsp.llm.types import TextContent
from pi_lsp.tools.environment import ToolEnvironment
from pi_lsp.tools.file_io.paths import InvalidPathError, display_path, resolve_to_cwd
from pi_lsp.tools.language.knowledge import DocumentDiagnostics, KnowledgeError, Problem
from pi_lsp.tools.language.problems import (
    counted,
    format_capped,
    format_problem,
    introduced,
    left_out_notice,
    ordered,
)

EDIT_TOOLS = frozenset({"edit", "write"})
MAX_CHARS = 2000
"""Characters of introduced problems appended to one result (KNOWLEDGE_SPEC)."""
MAX_REMINDERS = 5
"""Earlier problems still there, listed at most."""
MAX_PENDING = 256


@dataclass(frozen=True)
class AfterEditSettings:
    """``pi.diagnostics.*``: ``after_edit`` on/off; ``settle_seconds`` bounds the wait,
    ``quiet_seconds`` of no change mean settled; ``max_items`` problems listed at most."""

    after_edit: bool = True
    settle_seconds: float = 2.0
    quiet_seconds: float = 0.3
    max_items: int = 20


@dataclass
class _Before:
    path: Path
    count: int
    document: DocumentDiagnostics | None


@dataclass
class _Earlier:
    """Problems a session's changes introduced that have not been reminded yet, by file."""

    by_path: dict[Path, list[Problem]] = field(default_factory=dict)


class DiagnosticsAfterEdit:
    """The hook pair (module docstring): register :meth:`before` and :meth:`after`.

    Args:
        env: the session's tools environment (``knowledge``, ``cwd``).
        settings: returns the current :class:`AfterEditSettings` (read at each call).
    """

    def __init__(self, env: ToolEnvironment, settings: Callable[[], AfterEditSettings]) -> None:
        self.env = env
        self.settings = settings
        self._pending: dict[str, _Before] = {}
        self._earlier: dict[str, _Earlier] = {}

    def _active(self) -> bool:
        knowledge = self.env.knowledge
        return self.settings().after_edit and knowledge is not None and knowledge.unavailable("pi/diagnostics") is None

    async def before(self, ctx: BeforeToolCallContext, signal: AbortSignal) -> None:
        """Note the file's diagnostics and change count before an ``edit``/``write``."""
        if ctx.tool.name not in EDIT_TOOLS or not self._active():
            return None
        raw = getattr(ctx.args, "path", None)
        try:
            path = resolve_to_cwd(raw, self.env.cwd) if isinstance(raw, str) else None
        except (InvalidPathError, ValueError):
            path = None
        if path is None:
            return None
        knowledge = self.env.knowledge
        assert knowledge is not None
        try:
            documents = await knowledge.diagnostics([path])
        except KnowledgeError:
            return None
        # counted after the pull: a report the pull itself caused (a file the editor loaded for
        # it) is not taken for the server having checked the change
        count = knowledge.change_count(path)
        if len(self._pending) >= MAX_PENDING:  # calls blocked after this hook never reach after()
            self._pending.pop(next(iter(self._pending)))
        self._pending[ctx.tool_call.id] = _Before(path, count, _find(documents, path))
        return None

    async def after(self, ctx: AfterToolCallContext, signal: AbortSignal) -> AfterToolCallResult | None:
        """Wait for the diagnostics to settle and append what the change introduced."""
        before = self._pending.pop(ctx.tool_call.id, None)
        if before is None or ctx.is_error or signal.aborted or not self._active():
            return None
        knowledge = self.env.knowledge
        assert knowledge is not None
        settings = self.settings()
        if before.document is None or not before.document.servers:
            return None  # no language server checks this file: nothing will settle
        settled = await _unless_aborted(
            knowledge.wait_settled(before.path, before.count, settings.settle_seconds, settings.quiet_seconds), signal
        )
        if settled is None:
            return None
        earlier = self._earlier.setdefault(ctx.session_id, _Earlier())
        others = [p for p in earlier.by_path if p != before.path][:10]
        try:
            documents = await knowledge.diagnostics([before.path, *others])
        except KnowledgeError:
            return None
        now = _find(documents, before.path)
        new = introduced(before.document.problems, now.problems if now is not None else ())
        reminders = self._reminders(earlier, documents, before.path, new)
        if new:
            earlier.by_path.setdefault(before.path, []).extend(new)
        text = self._text(before.path, new, reminders, now, settled, settings)
        if not text:
            return None
        return AfterToolCallResult(content=_appended(ctx, text))

    def _reminders(
        self, earlier: _Earlier, documents: list[DocumentDiagnostics], changed: Path, new: list[Problem]
    ) -> list[tuple[str, Problem]]:
        """Earlier-introduced problems still present (each reminded once, then forgotten); the
        problems this change introduced in ``changed`` are not counted as earlier ones."""
        found: list[tuple[str, Problem]] = []
        for path, problems in list(earlier.by_path.items()):
            document = _find(documents, path)
            if document is None:
                continue
            fresh = {id(p) for p in new} if path == changed else set()
            present: dict[tuple[int, str, str, str], list[Problem]] = {}
            for problem in document.problems:  # where each one is now (lines shift)
                if id(problem) not in fresh:
                    present.setdefault(problem.key, []).append(problem)
            for problem in problems:
                if present.get(problem.key):
                    found.append((display_path(path, self.env.cwd), present[problem.key].pop(0)))
            del earlier.by_path[path]
        return ordered(found)

    def _text(
        self, path: Path, new: list[Problem], reminders: list[tuple[str, Problem]],
        now: DocumentDiagnostics | None, settled: bool, settings: AfterEditSettings,
    ) -> str:
        lines: list[str] = []
        shown = display_path(path, self.env.cwd)
        if new:
            servers = ", ".join(now.servers) if now is not None and now.servers else "the editor"
            items = ordered((shown, problem) for problem in new)
            listed, left_out = format_capped(items, settings.max_items, MAX_CHARS)
            lines.append(f"Diagnostics after this change ({servers}): {counted(len(new), 'new problem')}:")
            lines.extend(listed)
            if left_out:
                lines.append(left_out_notice(left_out))
        elif not settled and not reminders:
            lines.append(
                f"[Diagnostics: the editor's language server had not finished checking this change after "
                f"{settings.settle_seconds:g} s; call diagnostics later to see its problems.]"
            )
        if reminders:
            brief = [format_problem(p, problem) for p, problem in reminders[:MAX_REMINDERS]]
            more = len(reminders) - len(brief)
            lines.append("Still there from earlier changes: " + "; ".join(brief) + (f" (+{more} more)" if more else ""))
        return "\n".join(lines)


def _find(documents: list[DocumentDiagnostics], path: Path) -> DocumentDiagnostics | None:
    """The document of ``path`` among ``documents`` (the first one when the editor named it once)."""
    for document in documents:
        if document.path is not None and (document.path == path or document.path.resolve() == path.resolve()):
            return document
    return None


async def _unless_aborted(waiting, signal: AbortSignal) -> bool | None:
    """The wait's result, or ``None`` when the call was aborted meanwhile."""
    wait = asyncio.ensure_future(waiting)
    aborted = asyncio.ensure_future(signal.wait())
    try:
        done, _ = await asyncio.wait({wait, aborted}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (wait, aborted):
            if not task.done():
                task.cancel()
    return wait.result() if wait in done else None


def _appended(ctx: AfterToolCallContext, text: str) -> list:
    """The result's content with ``text`` appended to its last text block after a blank line."""
    content = list(ctx.result.content)
    for index in range(len(content) - 1, -1, -1):
        block = content[index]
        if isinstance(block, TextContent):
            content[index] = TextContent(text=f"{block.text}\n\n{text}" if block.text else text)
            return content
    content.append(TextContent(text=text))
    return content
