"""``definition`` and ``references``: where a symbol is defined / used, from the editor's servers.

Both take ``{path, line, symbol, occurrence?}`` and answer ``path:line: source line`` snippets
(:mod:`pi_lsp.tools.language.locations`). ``references`` includes the declaration
(``context.includeDeclaration: true``).
"""

from __future__ import annotations

from pi_lsp.agent.tool import ToolContext, ToolResult
from pi_lsp.tools.language.language_tool import LanguageTool, SymbolArgs, position_params
from pi_lsp.tools.language.locations import location_targets, snippet_lines

DEFINITION_DESCRIPTION = (
    "Find where a symbol is defined, using the editor's language server. Give the file, the 1-indexed line "
    "where the symbol appears and the symbol's exact text on that line (occurrence picks among several on "
    "the line). Returns path:line: source line for each definition."
)
REFERENCES_DESCRIPTION = (
    "Find every use of a symbol across the workspace, using the editor's language server (the declaration "
    "included). Give the file, the 1-indexed line where the symbol appears and the symbol's exact text on that "
    "line (occurrence picks among several on the line). Returns path:line: source line for each reference."
)


class DefinitionTool(LanguageTool):
    """``definition``: ``textDocument/definition`` at the symbol."""

    name = "definition"
    label = "definition"
    description = DEFINITION_DESCRIPTION
    args_model = SymbolArgs
    method = "textDocument/definition"
    prompt_snippet = "Find where a symbol is defined (the editor's language server)"

    async def execute(self, args: SymbolArgs, ctx: ToolContext) -> ToolResult:
        """Snippets of the definitions, or a sentence saying none was found."""
        path, uri, position = await self.locate(args)
        answer = await self.ask(self.method, position_params(uri, position), path)
        return await _located(self, answer.result, f"No definition found for `{args.symbol}` ({self.shown(path)}:{args.line}).")


class ReferencesTool(LanguageTool):
    """``references``: ``textDocument/references`` at the symbol, declaration included."""

    name = "references"
    label = "references"
    description = REFERENCES_DESCRIPTION
    args_model = SymbolArgs
    method = "textDocument/references"
    prompt_snippet = "Find every use of a symbol across the workspace (the editor's language server)"

    async def execute(self, args: SymbolArgs, ctx: ToolContext) -> ToolResult:
        """Snippets of the references, or a sentence saying none was found."""
        path, uri, position = await self.locate(args)
        params = {**position_params(uri, position), "context": {"includeDeclaration": True}}
        answer = await self.ask(self.method, params, path)
        return await _located(self, answer.result, f"No references found for `{args.symbol}` ({self.shown(path)}:{args.line}).")


async def _located(tool: LanguageTool, result: object, empty: str) -> ToolResult:
    targets = location_targets(result)
    if not targets:
        return ToolResult.text(empty)
    knowledge = tool.knowledge()
    lines = await snippet_lines(targets, knowledge.path_of, tool.shown, tool.text_of)
    return ToolResult.text("\n".join(lines), details={"count": len(targets)})
