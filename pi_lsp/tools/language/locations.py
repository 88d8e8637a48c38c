"""LSP locations as the model reads them: ``path:line: source line`` snippets, capped.

``Location`` (``uri``, ``range``) and ``LocationLink`` (``targetUri``, ``targetSelectionRange``,
else ``targetRange``) are both read; a single location, a list, or ``null``. Duplicates (same file
and line) are shown once. The source line comes from the editor's buffer or the disk
(:meth:`LanguageTool.text_of`), cut at 500 characters like grep's lines.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pi_lsp.tools.language.symbol_position import split_lines
from pi_lsp.tools.text.truncate import truncate_line

MAX_LOCATIONS = 100
"""Locations shown by ``definition``/``references`` before the rest are summarised."""


def location_targets(result: Any) -> list[tuple[str, int]]:
    """``(uri, 0-based line)`` of each location in a definition/references result, in order,
    without duplicates; malformed items are skipped."""
    items = result if isinstance(result, list) else [result] if isinstance(result, dict) else []
    seen: set[tuple[str, int]] = set()
    targets: list[tuple[str, int]] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        uri = item.get("targetUri", item.get("uri"))
        range_ = item.get("targetSelectionRange") or item.get("targetRange") or item.get("range")
        line = range_.get("start", {}).get("line") if isinstance(range_, dict) else None
        if not isinstance(uri, str) or not isinstance(line, int) or isinstance(line, bool):
            continue
        if (uri, line) not in seen:
            seen.add((uri, line))
            targets.append((uri, line))
    return targets


async def snippet_lines(
    targets: list[tuple[str, int]],
    path_of: Callable[[str], Path | None],
    shown: Callable[[Path], str],
    text_of: Callable[[Path], Awaitable[str]],
    limit: int = MAX_LOCATIONS,
) -> list[str]:
    """``path:line: source line`` for the first ``limit`` targets (1-based lines; the URI itself
    for a non-file location; the line text left out when the file cannot be read), then
    ``[N more locations not shown]`` when there were more."""
    lines: list[str] = []
    texts: dict[Path, list[str] | None] = {}
    for uri, line in targets[:limit]:
        path = path_of(uri)
        if path is None:
            lines.append(f"{uri}:{line + 1}")
            continue
        if path not in texts:
            try:
                texts[path] = split_lines(await text_of(path))
            except Exception:  # a file that cannot be read still names the location
                texts[path] = None
        source = texts[path]
        text = source[line] if source is not None and 0 <= line < len(source) else None
        label = f"{shown(path)}:{line + 1}"
        lines.append(f"{label}: {truncate_line(text.strip())[0]}" if text is not None else label)
    if len(targets) > limit:
        more = len(targets) - limit
        lines.append(f"[{more} more location{'s' if more != 1 else ''} not shown]")
    return lines
