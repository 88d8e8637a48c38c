"""The ``ls`` tool: one directory's entries, exactly as the peer lists them (pi-behaviour.md 2.7).

Every entry (dotfiles included, no ignore rules), sorted case-insensitively the way the peer's
``a.toLowerCase().localeCompare(b.toLowerCase())`` sorts in Node's default ``en-US`` ICU
collation (see :func:`collation_key`); ties keep directory order (a stable sort, as V8's, over
libuv's byte-ordered ``readdir``). Each
entry up to the limit is stat-ed with symlinks followed: a directory gets ``/``, an entry that
cannot be stat-ed (a dangling symlink) is skipped silently. Names are read as the filesystem
stores them; bytes that are not UTF-8 show as U+FFFD.
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import unicodedata
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pi_lsp.agent.tool import ABORTED_MESSAGE, ToolContext, ToolError, ToolResult
from pi_lsp.tools.builtin_tool import BuiltinTool
from pi_lsp.tools.file_io.os_errors import node_style_message
from pi_lsp.tools.file_io.paths import resolve_directory
from pi_lsp.tools.search.search_notices import js_number, notices_suffix
from pi_lsp.tools.text.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head

DEFAULT_LIMIT = 500
"""Entries returned when the call gives no ``limit`` (the peer's default)."""

DESCRIPTION = (
    "List directory contents. Returns entries sorted alphabetically, with '/' suffix for "
    "directories. Includes dotfiles. Output is truncated to 500 entries or 50KB (whichever is "
    "hit first)."
)

_ASCII_ORDER = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"
"""Lower-case printable ASCII in ICU root collation order (printed by Node's localeCompare)."""
_ASCII_WEIGHT = {char: index + 1 for index, char in enumerate(_ASCII_ORDER)}
_SYMBOL_WEIGHT = _ASCII_WEIGHT["~"] + 0.5  # other symbols (emoji ...): just before ``$``
_OTHER_BASE = 1 << 21  # letters of other scripts: after the Latin ones, by code point


def _primary(char: str) -> float:
    weight = _ASCII_WEIGHT.get(char)
    if weight is not None:
        return weight
    if unicodedata.category(char)[0] in "PSZ":
        return _SYMBOL_WEIGHT
    return _OTHER_BASE + ord(char)


def collation_key(name: str) -> tuple[tuple[float, ...], tuple[tuple[int, ...], ...]]:
    """Sort key approximating ICU's ``en-US`` comparison of ``name.lower()``.

    Primary level: base characters (accents removed by NFD; ``ß`` as ``ss``) weighted in ICU's
    order for ASCII (punctuation, then digits, then letters), other symbols just before the
    digits, other scripts after Latin letters by code point. Secondary level: the accents (and the
    ``ß`` mark), so ``a`` < ``ä`` < ``a b`` and ``ss`` < ``ß``. Exact for ASCII names; close for
    the rest.
    """
    primary: list[float] = []
    secondary: list[tuple[int, ...]] = []
    for char in unicodedata.normalize("NFD", name.lower().replace("ß", "s\U000e0000s")):
        if (unicodedata.combining(char) or char == "\U000e0000") and secondary:
            secondary[-1] = secondary[-1] + (ord(char),)
            continue
        primary.append(_primary(char))
        secondary.append(())
    return tuple(primary), tuple(secondary)


class LsArgs(BaseModel):
    """Arguments of ``ls`` (the peer's schema; open object)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, defer_build=True)

    path: str | None = Field(
        default=None, description="Directory to list (default: current directory)"
    )
    limit: float | None = Field(
        default=None, description="Maximum number of entries to return (default: 500)"
    )


def _list(directory: Path, limit: float) -> tuple[list[str], bool]:
    """Blocking part: sorted, suffixed entries up to ``limit``, and whether more remained."""
    try:
        with os.scandir(directory) as scan:
            names = [entry.name for entry in scan]
    except OSError as exc:
        raise ToolError(
            f"Cannot read directory: {node_style_message(exc, 'scandir', directory)}"
        ) from None
    names.sort(key=os.fsencode)  # libuv's scandir order, which the peer's stable sort keeps for ties
    names.sort(key=collation_key)
    results: list[str] = []
    for name in names:
        if len(results) >= limit:
            return results, True
        try:
            mode = os.stat(os.path.join(directory, name)).st_mode
        except (OSError, ValueError):
            continue
        shown = os.fsencode(name).decode("utf-8", "replace")
        results.append(shown + "/" if stat.S_ISDIR(mode) else shown)
    return results, False


class LsTool(BuiltinTool):
    """The ``ls`` tool (:class:`~pi_lsp.agent.tool.Tool` protocol).

    Errors (:class:`ToolError`), the peer's words: ``Path not found: {abs}``,
    ``Not a directory: {abs}``, ``Cannot read directory: {reason}``. An empty directory (or
    ``limit`` 0) gives ``(empty directory)``, a success.
    """

    name = "ls"
    label = "ls"
    description = DESCRIPTION
    args_model = LsArgs

    async def execute(self, args: LsArgs, ctx: ToolContext) -> ToolResult:
        """List the directory (module docstring); see the class for errors."""
        if ctx.signal.aborted:
            raise ToolError(ABORTED_MESSAGE)
        directory = resolve_directory(args.path, self.env.cwd)
        limit = args.limit if args.limit is not None else DEFAULT_LIMIT
        results, limit_reached = await asyncio.to_thread(_list, directory, limit)
        if not results:
            return ToolResult.text("(empty directory)")
        truncation = truncate_head("\n".join(results), max_lines=sys.maxsize)
        notices: list[str] = []
        details: dict[str, Any] = {}
        if limit_reached:
            notices.append(
                f"{js_number(limit)} entries limit reached. Use limit={js_number(limit * 2)} for more"
            )
            details["entryLimitReached"] = int(limit) if limit == int(limit) else limit
        if truncation.truncated:
            notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
            details["truncation"] = truncation.to_details()
        return ToolResult.text(truncation.content + notices_suffix(notices), details or None)
