"""The seven coding tools (read, bash, edit, write, grep, find, ls) and their registry.

:func:`create_tools` builds the tools of one session; :data:`DEFAULT_ACTIVE_TOOLS` are the ones
active by default (Pi: read, bash, edit, write; grep, find, ls registered but inactive).
"""

from __future__ import annotations

from importlib import import_module

from pi_lsp.agent.tool import Tool
from pi_lsp.tools.environment import ToolEnvironment

DEFAULT_ACTIVE_TOOLS: tuple[str, ...] = ("read", "bash", "edit", "write")
"""Active by default, in this order (pi-behaviour.md section 5.1)."""

TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write", "grep", "find", "ls")
"""Every built-in tool, in Pi's order."""

_FACTORIES = {
    "read": ("pi_lsp.tools.read", "ReadTool"),
    "bash": ("pi_lsp.tools.bash", "BashTool"),
    "edit": ("pi_lsp.tools.edit", "EditTool"),
    "write": ("pi_lsp.tools.write", "WriteTool"),
    "grep": ("pi_lsp.tools.grep", "GrepTool"),
    "find": ("pi_lsp.tools.find", "FindTool"),
    "ls": ("pi_lsp.tools.ls", "LsTool"),
}


def create_tools(env: ToolEnvironment) -> list[Tool]:
    """Build every built-in tool for ``env``, in :data:`TOOL_NAMES` order.

    Each tool class takes the environment as its only constructor argument. Modules are imported
    here, not at package import, so importing :mod:`pi_lsp.tools` stays cheap.
    """
    tools: list[Tool] = []
    for name in TOOL_NAMES:
        module_name, class_name = _FACTORIES[name]
        tools.append(getattr(import_module(module_name), class_name)(env))
    return tools
