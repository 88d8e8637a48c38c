"""MCP tool annotations for pi-lsp's tools (MCP spec, ``ToolAnnotations``: hints for the client).

``readOnlyHint``: the tool does not modify its environment. ``destructiveHint`` (meaningful when not
read-only): it may change or remove what exists. ``idempotentHint``: calling it again with the same
arguments has no further effect. ``openWorldHint``: it reaches beyond a closed set of entities.
A tool pi-lsp does not know here gets no hints (the client assumes the worst).
"""

from __future__ import annotations

from typing import Any

_READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}

HINTS: dict[str, dict[str, bool]] = {
    "read": _READ_ONLY,
    "grep": _READ_ONLY,
    "find": _READ_ONLY,
    "ls": _READ_ONLY,
    # edit replaces text in an existing file; the same edit again fails (its oldText is gone).
    "edit": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": False},
    # write creates or overwrites; writing the same content again changes nothing more.
    "write": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True, "openWorldHint": False},
    # bash runs any command: anything can happen, including the network.
    "bash": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True},
}


def hints_for(name: str, label: str | None = None) -> dict[str, Any]:
    """The annotations dict (MCP wire names) for tool ``name``, with ``title`` = ``label``."""
    hints: dict[str, Any] = dict(HINTS.get(name, {}))
    if label:
        hints["title"] = label
    return hints
