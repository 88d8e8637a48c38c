"""The after-edit diagnostics hooks against an in-process EditorKnowledge (issue 17): what is
appended, when nothing is waited for, the caps and the not-settled note."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pi_lsp.agent.hooks import AfterToolCallContext, BeforeToolCallContext
from pi_lsp.agent.tool import AbortSignal, ToolResult
from pi_lsp.llm.types import ToolCall
from pi_lsp.tools.environment import ToolEnvironment
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from pi_lsp.tools.language.after_edit import AfterEditSettings, DiagnosticsAfterEdit
from pi_lsp.tools.language.knowledge import DocumentDiagnostics, Problem


class Knowledge:
    """Answers pulls from a script: each pull returns the next list of problems."""

    position_encoding = "utf-16"

    def __init__(self, pulls: list[list[Problem]], servers: tuple[str, ...] = ("pylsp",), settles: bool = True) -> None:
        self.pulls = pulls
        self.servers = servers
        self.settles = settles
        self.waits: list[tuple[int, float, float]] = []

    def unavailable(self, method: str) -> str | None:
        return None

    async def diagnostics(self, paths: Any = None) -> list[DocumentDiagnostics]:
        problems = self.pulls.pop(0)
        return [DocumentDiagnostics(p.as_uri(), p, 1, self.servers, tuple(problems)) for p in paths[:1]]

    def change_count(self, path: Path) -> int:
        return 7

    async def wait_settled(self, path: Path, since: int, settle: float, quiet: float) -> bool:
        self.waits.append((since, settle, quiet))
        return self.settles


def _hook(tmp_path: Path, knowledge: Knowledge, **settings: Any) -> DiagnosticsAfterEdit:
    env = ToolEnvironment(cwd=tmp_path, files=LocalFileAccess(), temp_dir=tmp_path)
    env.knowledge = knowledge  # type: ignore[assignment]
    return DiagnosticsAfterEdit(env, lambda: AfterEditSettings(**settings))


async def _run(hook: DiagnosticsAfterEdit, is_error: bool = False) -> str | None:
    call = ToolCall(id="c1", name="edit", arguments={})
    tool = SimpleNamespace(name="edit")
    args = SimpleNamespace(path="a.py")
    await hook.before(BeforeToolCallContext(call, tool, args, "s"), AbortSignal())  # type: ignore[arg-type]
    result = ToolResult.text("Successfully replaced 1 block(s) in a.py.")
    patch = await hook.after(AfterToolCallContext(call, tool, args, result, is_error, "s"), AbortSignal())  # type: ignore[arg-type]
    return None if patch is None else patch.content[0].text  # type: ignore[index, union-attr]


def p(line: int, message: str, severity: int = 1) -> Problem:
    return Problem(line, severity, message, "pyflakes")


async def test_introduced_problems_are_appended_errors_first_and_capped(tmp_path: Path) -> None:
    before = [p(0, "old")]
    after = [p(0, "old"), p(3, "w", 2), p(5, "e1"), p(6, "e2")]
    knowledge = Knowledge([before, after])
    text = await _run(_hook(tmp_path, knowledge, max_items=2, settle_seconds=9, quiet_seconds=0.1))
    assert text == (
        "Successfully replaced 1 block(s) in a.py.\n\nDiagnostics after this change (pylsp): 3 new problems:\n"
        "a.py:6: error: e1 (pyflakes)\na.py:7: error: e2 (pyflakes)\n[1 more problem not shown]"
    )
    assert knowledge.waits == [(7, 9, 0.1)]


async def test_no_wait_without_a_server_and_nothing_for_an_error_result(tmp_path: Path) -> None:
    knowledge = Knowledge([[]], servers=())
    assert await _run(_hook(tmp_path, knowledge)) is None
    assert knowledge.waits == [] and knowledge.pulls == []  # the before-pull only
    failed = Knowledge([[], [p(1, "x")]])
    assert await _run(_hook(tmp_path, failed), is_error=True) is None
    assert failed.waits == []


async def test_a_change_the_server_did_not_report_on_in_time_says_so(tmp_path: Path) -> None:
    knowledge = Knowledge([[], []], settles=False)
    text = await _run(_hook(tmp_path, knowledge, settle_seconds=2))
    assert text is not None and text.endswith(
        "[Diagnostics: the editor's language server had not finished checking this change after 2 s; "
        "call diagnostics later to see its problems.]"
    )


async def test_the_setting_turns_it_off(tmp_path: Path) -> None:
    knowledge = Knowledge([[], [p(1, "x")]])
    assert await _run(_hook(tmp_path, knowledge, after_edit=False)) is None
    assert len(knowledge.pulls) == 2
