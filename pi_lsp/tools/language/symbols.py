"""``symbols``: a file's outline (classes, functions, variables ...) from the editor's language server.

Reads ``DocumentSymbol[]`` (nested by ``children``, indented two spaces per level) and
``SymbolInformation[]`` (flat, its ``containerName`` shown). One line per symbol,
``line: kind name detail`` with 1-based lines, at most :data:`MAX_SYMBOLS` lines with a notice.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pi_lsp.agent.tool import ToolContext, ToolResult
from pi_lsp.tools.language.language_tool import LanguageTool

MAX_SYMBOLS = 300

SYMBOL_KINDS = {
    1: "file", 2: "module", 3: "namespace", 4: "package", 5: "class", 6: "method", 7: "property",
    8: "field", 9: "constructor", 10: "enum", 11: "interface", 12: "function", 13: "variable",
    14: "constant", 15: "string", 16: "number", 17: "boolean", 18: "array", 19: "object", 20: "key",
    21: "null", 22: "enum member", 23: "struct", 24: "event", 25: "operator", 26: "type parameter",
}
"""LSP ``SymbolKind`` values as shown."""

SYMBOLS_DESCRIPTION = (
    "List the symbols of a file (classes, functions, methods, variables ...) with their line numbers, as the "
    "editor's language server sees them: a quick outline before reading or editing a large file."
)


class SymbolsArgs(BaseModel):
    """``{path}`` (open object)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    path: str = Field(description="Path to the file (relative or absolute)")


def outline(result: Any) -> list[str]:
    """The outline lines of a ``textDocument/documentSymbol`` result (module docstring)."""
    lines: list[str] = []

    def start_line(item: dict[str, Any]) -> int | None:
        range_ = item.get("selectionRange") or item.get("range") or (item.get("location") or {}).get("range")
        line = range_.get("start", {}).get("line") if isinstance(range_, dict) else None
        return line if isinstance(line, int) else None

    def walk(items: Any, depth: int) -> None:
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                continue
            line = start_line(item)
            kind = SYMBOL_KINDS.get(item.get("kind"), "symbol")  # type: ignore[arg-type]
            extra = item.get("detail") or ""
            container = item.get("containerName")
            if container:
                extra = f"{extra} (in {container})".strip()
            shown_line = f"{line + 1}" if line is not None else "?"
            lines.append(f"{shown_line}: {'  ' * depth}{kind} {item['name']}{' ' + extra if extra else ''}")
            walk(item.get("children"), depth + 1)

    walk(result, 0)
    return lines


class SymbolsTool(LanguageTool):
    """``symbols``: ``textDocument/documentSymbol``."""

    name = "symbols"
    label = "symbols"
    description = SYMBOLS_DESCRIPTION
    args_model = SymbolsArgs
    method = "textDocument/documentSymbol"
    prompt_snippet = "Outline a file's classes, functions and variables with their lines"

    async def execute(self, args: SymbolsArgs, ctx: ToolContext) -> ToolResult:
        """The outline of ``args.path``."""
        knowledge = self.knowledge()
        path = self.resolve(args.path)
        await self.snapshot(path)  # a missing file is ENOENT, as read says it
        answer = await self.ask(self.method, {"textDocument": {"uri": knowledge.uri_of(path)}}, path)
        lines = outline(answer.result)
        if not lines:
            return ToolResult.text(f"The language server found no symbols in {self.shown(path)}.")
        shown = lines[:MAX_SYMBOLS]
        if len(lines) > MAX_SYMBOLS:
            shown.append(f"[{len(lines) - MAX_SYMBOLS} more symbols not shown]")
        return ToolResult.text(f"{self.shown(path)}:\n" + "\n".join(shown))
