"""The language-server tools (issue 17): diagnostics, definition, references, rename, symbols, hover.

They ask the editor's own language servers through the :class:`~pi_lsp.tools.language.knowledge.
EditorKnowledge` seam (``env.knowledge``), which only the daemon provides. :func:`create_language_tools`
builds them; they are registered by the daemon and active by default when the editor advertises
what they need (:attr:`LanguageTool.unavailable` is ``None``).
"""

from __future__ import annotations

from pi_lsp.tools.environment import ToolEnvironment
from pi_lsp.tools.language.diagnostics_tool import DiagnosticsTool
from pi_lsp.tools.language.hover import HoverTool
from pi_lsp.tools.language.language_tool import LanguageTool
from pi_lsp.tools.language.navigation import DefinitionTool, ReferencesTool
from pi_lsp.tools.language.rename import RenameTool
from pi_lsp.tools.language.symbols import SymbolsTool

LANGUAGE_TOOL_NAMES: tuple[str, ...] = ("diagnostics", "definition", "references", "rename", "symbols", "hover")
"""Every language tool, in listing order."""

_CLASSES: dict[str, type[LanguageTool]] = {
    "diagnostics": DiagnosticsTool,
    "definition": DefinitionTool,
    "references": ReferencesTool,
    "rename": RenameTool,
    "symbols": SymbolsTool,
    "hover": HoverTool,
}


def create_language_tools(env: ToolEnvironment) -> list[LanguageTool]:
    """Build the language tools for ``env`` in :data:`LANGUAGE_TOOL_NAMES` order."""
    return [_CLASSES[name](env) for name in LANGUAGE_TOOL_NAMES if name in _CLASSES]
