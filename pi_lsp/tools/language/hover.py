"""``hover``: the type and documentation the editor's language server shows for a symbol.

``Hover.contents`` may be ``MarkupContent`` (``{kind, value}``), a ``MarkedString`` (a string or
``{language, value}``) or a list of them; all become plain text (code blocks fenced with their
language), capped at :data:`MAX_HOVER_CHARS` characters with a notice.
"""

from __future__ import annotations

from typing import Any

from pi_lsp.agent.tool import ToolContext, ToolResult
from pi_lsp.tools.language.language_tool import LanguageTool, SymbolArgs, position_params

MAX_HOVER_CHARS = 4000

HOVER_DESCRIPTION = (
    "Show the type, signature and documentation of a symbol, as the editor's language server describes it. "
    "Give the file, the 1-indexed line where the symbol appears and the symbol's exact text on that line "
    "(occurrence picks among several on the line)."
)


def hover_text(contents: Any) -> str:
    """The text of ``Hover.contents`` (see the module docstring); ``""`` for nothing."""
    if isinstance(contents, str):
        return contents
    if isinstance(contents, list):
        return "\n\n".join(part for item in contents if (part := hover_text(item)))
    if isinstance(contents, dict):
        value = contents.get("value")
        if not isinstance(value, str):
            return ""
        language = contents.get("language")
        return f"```{language}\n{value}\n```" if isinstance(language, str) else value
    return ""


class HoverTool(LanguageTool):
    """``hover``: ``textDocument/hover`` at the symbol."""

    name = "hover"
    label = "hover"
    description = HOVER_DESCRIPTION
    args_model = SymbolArgs
    method = "textDocument/hover"
    prompt_snippet = "Show a symbol's type and documentation (the editor's language server)"

    async def execute(self, args: SymbolArgs, ctx: ToolContext) -> ToolResult:
        """The hover text, or a sentence saying the server has none."""
        path, uri, position = await self.locate(args)
        answer = await self.ask(self.method, position_params(uri, position), path)
        result = answer.result if isinstance(answer.result, dict) else {}
        text = hover_text(result.get("contents")).strip()
        if not text:
            return ToolResult.text(f"The language server has no information on `{args.symbol}` ({self.shown(path)}:{args.line}).")
        if len(text) > MAX_HOVER_CHARS:
            text = text[:MAX_HOVER_CHARS] + f"\n\n[Hover text truncated at {MAX_HOVER_CHARS} characters]"
        return ToolResult.text(text)
