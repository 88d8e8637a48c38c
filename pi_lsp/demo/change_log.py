"""How ``pi-lsp demo`` shows a turn's change set (``pi/changes``) and a revert (``pi/revertChanges``).

:func:`change_set_lines` renders a ``pi/changes`` result for a person: per file its path (relative
to the project), state, where it stands now and the tool calls that changed it, then each hunk as a
short unified-diff view (``@@ -old +new @@`` with 1-based line numbers, as ``diff -u`` writes them,
its id and status, then ``-``/``+`` lines). :func:`revert_lines` renders a ``pi/revertChanges``
result. :func:`pick_hunk` chooses the hunk the demo takes back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CURRENT = {
    "agent": "as the agent left it",
    "changed": "changed since the agent's change",
    "missing": "gone",
    "reverted": "back to its content before the agent",
}
"""``pi/changes`` ``current`` values, as the log words them."""

HUNK_LINES = 6
"""Each side of a hunk shows at most this many lines."""


def relative(path: str, project: Path) -> str:
    """``path`` (absolute) relative to ``project`` with ``/`` separators, or as given outside it."""
    try:
        return Path(path).relative_to(project.resolve()).as_posix()
    except ValueError:
        try:
            return Path(path).relative_to(project).as_posix()
        except ValueError:
            return path


def _range(start: int, count: int) -> str:
    # diff -u: 1-based; an empty range names the line before it (0-based start = that 1-based line)
    return f"{start + (1 if count else 0)},{count}"


def _side(mark: str, text: str) -> list[str]:
    lines = text.splitlines() or ([""] if text else [])
    shown = [f"      {mark}{line}" for line in lines[:HUNK_LINES]]
    if len(lines) > HUNK_LINES:
        shown.append(f"      {mark}… {len(lines) - HUNK_LINES} more lines")
    return shown


def change_set_lines(result: dict[str, Any], project: Path) -> list[str]:
    """The log lines of a ``pi/changes`` result ``{sessionId, turn, currentTurn, files: [...]}``."""
    files = result.get("files") or []
    scope = f"turn {result['turn']}" if result.get("turn") is not None else "the session"
    lines = [f"pi/changes: {len(files)} file(s) changed in {scope}"]
    for entry in files:
        calls = ", ".join(f"{c.get('toolName')} ({c.get('toolCallId')})" for c in entry.get("toolCalls") or [])
        now = CURRENT.get(entry.get("current", ""), entry.get("current", "?"))
        lines.append(f"  {relative(entry.get('path', '?'), project)}: {entry.get('state')} by {calls}; now {now}")
        if entry.get("binary"):
            lines.append("    (binary: no hunks)")
        if not entry.get("restorable", True):
            lines.append("    (not restorable: its content before the change was too large to keep)")
        for hunk in entry.get("hunks") or []:
            lines.append(
                f"    @@ -{_range(hunk['oldStart'], hunk['oldLines'])} +{_range(hunk['newStart'], hunk['newLines'])} @@"
                f" hunk {hunk['id']} ({hunk['status']})"
            )
            lines.extend(_side("-", hunk.get("oldText", "")))
            lines.extend(_side("+", hunk.get("newText", "")))
    return lines


def revert_lines(result: dict[str, Any], project: Path) -> list[str]:
    """The log lines of a ``pi/revertChanges`` result ``{reverted, files, conflicts}``."""
    lines = [f"pi/revertChanges: reverted {len(result.get('reverted') or [])} hunk(s): "
             + (", ".join(result.get("reverted") or []) or "none")]
    for entry in result.get("files") or []:
        lines.append(f"  {relative(entry.get('path', '?'), project)}: {entry.get('action')}")
    for conflict in result.get("conflicts") or []:
        hunk = f" hunk {conflict['hunk']}" if conflict.get("hunk") else ""
        lines.append(f"  conflict: {relative(conflict.get('path', '?'), project)}{hunk}: {conflict.get('reason')}")
    if not result.get("conflicts"):
        lines.append("  conflicts: none")
    return lines


def pick_hunk(result: dict[str, Any], project: Path, path: str) -> dict[str, Any] | None:
    """The first applied hunk of ``path`` (relative to ``project``) in a ``pi/changes`` result."""
    for entry in result.get("files") or []:
        if relative(entry.get("path", ""), project) == path:
            for hunk in entry.get("hunks") or []:
                if hunk.get("status") == "applied":
                    return hunk
    return None
