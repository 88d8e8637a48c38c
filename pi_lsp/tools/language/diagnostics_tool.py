"""``diagnostics``: the editor's current problems of one file, or of every file it has diagnostics for.

Answers ``path:line: severity: message (source)`` lines, errors first, capped at
:data:`MAX_ITEMS` problems and :data:`MAX_CHARS` characters with a notice
(:mod:`pi_lsp.tools.language.problems`). A file no language server is attached to is an error
result (nothing could have checked it); a file with no problems says so.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from pi_lsp.agent.tool import ToolContext, ToolError, ToolResult
from pi_lsp.tools.language.knowledge import KnowledgeError, KnowledgeTimeout
from pi_lsp.tools.language.language_tool import LanguageTool
from pi_lsp.tools.language.problems import counted, format_capped, left_out_notice, ordered

MAX_ITEMS = 100
MAX_CHARS = 10_000

DIAGNOSTICS_DESCRIPTION = (
    "Show the problems (errors, warnings) the editor's language servers and linters currently report for a file, "
    "or, without a path, for every file of the workspace the editor has diagnostics for. Errors first, as "
    "path:line: severity: message (source)."
)


class DiagnosticsArgs(BaseModel):
    """``{path?}`` (open object)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    path: str | None = Field(None, description="Path to the file (relative or absolute); omit for the whole workspace")


class DiagnosticsTool(LanguageTool):
    """``diagnostics``: ``pi/diagnostics`` for one file or all."""

    name = "diagnostics"
    label = "diagnostics"
    description = DIAGNOSTICS_DESCRIPTION
    args_model = DiagnosticsArgs
    method = "pi/diagnostics"
    prompt_snippet = "Show the errors and warnings the editor reports for a file or the workspace"

    async def execute(self, args: DiagnosticsArgs, ctx: ToolContext) -> ToolResult:
        """The problems, or a sentence saying there are none."""
        knowledge = self.knowledge()
        path = self.resolve(args.path) if args.path is not None else None
        if path is not None:
            await self.snapshot(path)  # a missing file is ENOENT, as read says it
        try:
            documents = await knowledge.diagnostics([path] if path is not None else None)
        except KnowledgeTimeout as exc:
            raise ToolError(f"The editor did not report its diagnostics in time ({exc.message}). Try again later.") from None
        except KnowledgeError as exc:
            raise ToolError(f"The editor could not report its diagnostics: {exc.message}") from None
        if path is not None and not any(doc.servers for doc in documents):
            raise ToolError(
                f"No language server in the editor checks {self.shown(path)}, so there are no diagnostics for it. "
                "Run the project's own checks with bash instead."
            )
        items = ordered(
            (self.shown(doc.path) if doc.path is not None else doc.uri, problem)
            for doc in documents
            for problem in doc.problems
        )
        where = self.shown(path) if path is not None else "the workspace"
        if not items:
            return ToolResult.text(f"No problems reported for {where}.")
        errors = sum(1 for _, problem in items if problem.severity == 1)
        files = len({shown for shown, _ in items})
        lines, left_out = format_capped(items, MAX_ITEMS, MAX_CHARS)
        header = f"{counted(len(items), 'problem')} ({counted(errors, 'error')}) in {counted(files, 'file')}:"
        if left_out:
            lines.append(left_out_notice(left_out))
        return ToolResult.text("\n".join([header, *lines]), details={"problems": len(items), "errors": errors})
