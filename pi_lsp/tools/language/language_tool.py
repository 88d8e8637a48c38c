"""The common part of the language-server tools (issue 17): availability, symbol lookup, asking.

Each tool asks the editor's language servers through :class:`~pi_lsp.tools.language.knowledge.
EditorKnowledge` (``env.knowledge``). Failures become :class:`~pi_lsp.agent.tool.ToolError`\\ s that
say what to try: the editor does not offer the method, no language server handles the file, the
server failed or took too long, the symbol is not on the line.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from pi_lsp.agent.tool import ToolError
from pi_lsp.tools.builtin_tool import BuiltinTool
from pi_lsp.tools.file_io.file_access import FileSnapshot
from pi_lsp.tools.file_io.os_errors import node_style_message
from pi_lsp.tools.file_io.paths import InvalidPathError, display_path, resolve_to_cwd
from pi_lsp.tools.language.knowledge import (
    EditorKnowledge,
    KnowledgeError,
    KnowledgeTimeout,
    LanguageAnswer,
    LanguageServerFailed,
)
from pi_lsp.tools.language.symbol_position import SymbolNotFound, SymbolPosition, resolve_symbol

NO_EDITOR = "no editor is connected: only the pi-lsp daemon reaches the editor's language servers"
UTF8_BOM = b"\xef\xbb\xbf"


class SymbolArgs(BaseModel):
    """``{path, line, symbol, occurrence?}``: a symbol addressed by its line and text (open object)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    path: str = Field(description="Path to the file (relative or absolute)")
    line: int = Field(ge=1, description="Line number of the symbol (1-indexed)")
    symbol: str = Field(description="The symbol's exact text as it appears on that line, e.g. a function or variable name")
    occurrence: int | None = Field(
        None, ge=1, description="Which occurrence of the symbol on that line (1-indexed, default 1)"
    )


class LanguageTool(BuiltinTool):
    """Base of the language tools. ``method`` is the LSP method asked (or ``pi/diagnostics``)."""

    method: ClassVar[str]

    @property
    def unavailable(self) -> str | None:
        """Why the tool cannot work in this session (``pi/listTools`` shows it), or ``None``."""
        knowledge = self.env.knowledge
        if knowledge is None:
            return NO_EDITOR
        return knowledge.unavailable(self.method)

    def knowledge(self) -> EditorKnowledge:
        """The seam, or a ToolError saying why the editor cannot be asked."""
        reason = self.unavailable
        if reason is not None or self.env.knowledge is None:
            raise ToolError(f"The {self.name} tool is not available: {reason or NO_EDITOR}.")
        return self.env.knowledge

    def resolve(self, raw: str) -> Path:
        """The model's path, resolved as the file tools resolve it."""
        try:
            return resolve_to_cwd(raw, self.env.cwd)
        except InvalidPathError as exc:
            raise ToolError(str(exc)) from exc

    def shown(self, path: Path) -> str:
        """``path`` as results show it (relative to the working directory when inside it)."""
        return display_path(path, self.env.cwd)

    async def snapshot(self, path: Path) -> FileSnapshot:
        """The file's true content (editor buffer or disk), read on the tool's behalf: it does not
        count as the model having read the buffer (a later ``write`` still needs a ``read``)."""
        files = self.env.files
        try:
            if "remember" in inspect.signature(files.read).parameters:
                return await files.read(path, remember=False)  # type: ignore[call-arg]
            return await files.read(path)
        except OSError as exc:
            raise ToolError(node_style_message(exc, "open")) from exc

    async def text_of(self, path: Path) -> str:
        """:meth:`snapshot` as text (UTF-8 without BOM; undecodable bytes replaced)."""
        data = (await self.snapshot(path)).data
        if data.startswith(UTF8_BOM):
            data = data[len(UTF8_BOM):]
        return data.decode("utf-8", "replace")

    async def locate(self, args: SymbolArgs) -> tuple[Path, str, SymbolPosition]:
        """``(path, uri, position)`` of the symbol ``args`` names; ToolError when it is not there."""
        knowledge = self.knowledge()
        path = self.resolve(args.path)
        text = await self.text_of(path)
        try:
            position = resolve_symbol(
                text, args.line, args.symbol, args.occurrence or 1, knowledge.position_encoding, self.shown(path)
            )
        except SymbolNotFound as exc:
            raise ToolError(exc.message) from None
        return path, knowledge.uri_of(path), position

    async def ask(self, method: str, params: dict[str, Any], path: Path) -> LanguageAnswer:
        """``pi/languageRequest``; an answer without servers, an error or a timeout is a ToolError."""
        knowledge = self.knowledge()
        shown = self.shown(path)
        try:
            answer = await knowledge.language_request(method, params)
        except KnowledgeTimeout as exc:
            raise ToolError(
                f"The editor's language server did not answer {method} for {shown} in time ({exc.message}). "
                "It may still be starting or busy: try again later, or use read/grep instead."
            ) from None
        except LanguageServerFailed as exc:
            raise ToolError(
                f"The language server failed on {method} for {shown}: {exc.message}. "
                "Check the line and symbol, or use read/grep instead."
            ) from None
        except KnowledgeError as exc:
            raise ToolError(f"The editor could not be asked ({method} for {shown}): {exc.message}") from None
        if not answer.servers:
            raise ToolError(
                f"No language server in the editor handles {method} for {shown}. "
                "Use read/grep instead (or open a file of a language the editor has a server for)."
            )
        return answer


def position_params(uri: str, position: SymbolPosition) -> dict[str, Any]:
    """``TextDocumentPositionParams`` as JSON."""
    return {"textDocument": {"uri": uri}, "position": {"line": position.line, "character": position.character}}
