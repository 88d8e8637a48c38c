"""The seven coding tools (read, bash, edit, write, grep, find, ls) and their registry.

:func:`create_tools` builds the tools of one session; :data:`DEFAULT_ACTIVE_TOOLS` are the ones
active by default (Pi: read, bash, edit, write; grep, find, ls registered but inactive).
"""

from __future__ import annotations

from pi_lsp.agent.tool import Tool
from pi_lsp.tools.bash import BashTool
from pi_lsp.tools.edit import EditTool
from pi_lsp.tools.environment import ToolEnvironment
from pi_lsp.tools.find import FindTool
from pi_lsp.tools.grep import GrepTool
from pi_lsp.tools.ls import LsTool
from pi_lsp.tools.read import ReadTool
from pi_lsp.tools.write import WriteTool

DEFAULT_ACTIVE_TOOLS: tuple[str, ...] = ("read", "bash", "edit", "write")
"""Active by default, in this order (pi-behaviour.md section 5.1)."""

TOOL_NAMES: tuple[str, ...] = ("read", "bash", "edit", "write", "grep", "find", "ls")
"""Every built-in tool, in Pi's order."""

_TOOL_CLASSES = {
    "read": ReadTool,
    "bash": BashTool,
    "edit": EditTool,
    "write": WriteTool,
    "grep": GrepTool,
    "find": FindTool,
    "ls": LsTool,
}


def create_tools(env: ToolEnvironment) -> list[Tool]:
    """Build every built-in tool for ``env``, in :data:`TOOL_NAMES` order.

    Each tool class takes the environment as its only constructor argument.
    """
    return [_TOOL_CLASSES[name](env) for name in TOOL_NAMES]
