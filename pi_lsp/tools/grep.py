"""The ``grep`` tool: search file contents with ripgrep (pi-behaviour.md 2.5, design.md section 7).

The peer's parameters, limits, output formats and notices, with pi-lsp's decided differences:
files are searched in path order (``rg --sort=path``), ``.gitignore`` is honoured outside git
repositories too, ``.git`` is never searched, and context works like ``rg -C``: overlapping
blocks are merged so no line is printed twice (a match is ``{path}:{n}: {text}``, a context line
``{path}-{n}- {text}``, as in the peer).

A directory is searched by rg's parallel walk (``--sort=path`` would make it single-threaded):
its output is read whole and each file's block of lines put in path order here. Past
:data:`PARALLEL_OUTPUT_BUDGET` of output (many matches, so the answer lies near the front of the
tree) that run is stopped and a sorted rg streams instead (issue 21); both give the same answer.

rg runs in its plain output mode (``--null`` after each path, so any file name parses) with
``--max-columns`` previews, so a minified file cannot make one output line huge. It is stopped
as soon as the answer is known: at the match limit (after the last match's trailing context) or
once the output is past the byte limit. Line numbers are 1-based; the 500-character cut counts
code points.

Lines of files the environment's ``content_guard`` protects (``.env``, keys: issue 13) are left
out when they turn up under a searched folder, and the result says how many matches were
withheld and that reading such a file asks for approval (a protected file named as the search
path itself was already asked about by the policy, so its lines are shown).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pi_lsp.agent.tool import ABORTED_MESSAGE, ToolContext, ToolError, ToolResult
from pi_lsp.tools.builtin_tool import BuiltinTool
from pi_lsp.tools.file_io.paths import NulInPathError, resolve_to_cwd
from pi_lsp.tools.file_io.regular_files import special_kind
from pi_lsp.tools.search.regex_error import describe_regex_error
from pi_lsp.tools.search.ripgrep import RipgrepRun, path_sort_key, walk_args
from pi_lsp.tools.search.search_notices import js_number, notices_suffix
from pi_lsp.tools.shell.spawn_args import spawn_args
from pi_lsp.tools.text.truncate import (
    DEFAULT_MAX_BYTES,
    GREP_MAX_LINE_LENGTH,
    format_size,
    truncate_head,
    truncate_line,
)

_LEADING_DOT_SLASH = re.compile(r"^(!?)(?:\./)+")

DEFAULT_LIMIT = 100
"""Matches returned when the call gives no ``limit`` (the peer's default)."""

MAX_COLUMNS = 4 * GREP_MAX_LINE_LENGTH + 48
"""rg's ``--max-columns`` (bytes): longer lines arrive as a preview of this many bytes, which
always holds more than :data:`~pi_lsp.tools.text.truncate.GREP_MAX_LINE_LENGTH` characters."""

PARALLEL_OUTPUT_BUDGET = 2 * 1024 * 1024
"""Bytes of rg output read from a parallel (unsorted) search before it gives way to a sorted,
streamed one: past this, matches are plentiful and the answer lies near the front of the tree."""

DESCRIPTION = (
    "Search file contents for a pattern. Returns matching lines with file paths and line numbers. "
    "Respects .gitignore. Output is truncated to 100 matches or 50KB (whichever is hit first). "
    "Long lines are truncated to 500 chars."
)


class GrepArgs(BaseModel):
    """Arguments of ``grep`` (the peer's schema; open object: unknown keys are ignored)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, defer_build=True)

    pattern: str = Field(description="Search pattern (regex or literal string)")
    path: str | None = Field(
        default=None, description="Directory or file to search (default: current directory)"
    )
    glob: str | None = Field(
        default=None, description="Filter files by glob pattern, e.g. '*.ts' or '**/*.spec.ts'"
    )
    ignore_case: bool | None = Field(
        default=None, alias="ignoreCase", description="Case-insensitive search (default: false)"
    )
    literal: bool | None = Field(
        default=None,
        description="Treat pattern as literal string instead of regex (default: false)",
    )
    context: float | None = Field(
        default=None,
        description="Number of lines to show before and after each match (default: 0)",
    )
    limit: float | None = Field(
        default=None, description="Maximum number of matches to return (default: 100)"
    )


def _parse_line(raw: bytes) -> tuple[bytes, int, Literal[":", "-"], bytes] | None:
    """Split one plain rg line ``{path}\\0{n}{:|-}{text}``; ``None`` for anything else
    (binary-file warnings, separators)."""
    nul = raw.find(b"\0")
    if nul < 0:
        return None
    rest = raw[nul + 1 :]
    digits = 0
    while digits < len(rest) and 48 <= rest[digits] <= 57:
        digits += 1
    if digits == 0 or digits == len(rest) or rest[digits] not in b":-":
        return None
    kind: Literal[":", "-"] = ":" if rest[digits] == 58 else "-"
    return raw[:nul], int(rest[:digits]), kind, rest[digits + 1 :]


class _Formatter:
    """Turns rg's raw paths and line texts into the peer's display forms."""

    def __init__(self, search_path: Path, is_directory: bool) -> None:
        self._is_directory = is_directory
        # a directory is searched as "." from inside it (rg prints "./a.txt"); a file by its path
        self._prefix = b"./" if is_directory else os.fsencode(search_path).rstrip(b"/") + b"/"
        self._cache: dict[bytes, str] = {}
        self.lines_truncated = False

    def path(self, raw: bytes) -> str:
        """Relative to the searched directory with ``/`` (else the basename), as the peer."""
        shown = self._cache.get(raw)
        if shown is None:
            if self._is_directory and raw.startswith(self._prefix):
                shown = raw[len(self._prefix) :].decode("utf-8", "replace")
            else:
                shown = os.path.basename(raw).decode("utf-8", "replace")
            self._cache[raw] = shown
        return shown

    def line(self, path: bytes, number: int, kind: str, text: bytes) -> str:
        """``{path}:{n}: {text}`` or ``{path}-{n}- {text}``; CRs removed, cut to 500 chars."""
        decoded = text.decode("utf-8", "replace").replace("\r", "")
        cut, was_cut = truncate_line(decoded, GREP_MAX_LINE_LENGTH)
        if was_cut:
            self.lines_truncated = True
        return f"{self.path(path)}{kind}{number}{kind} {cut}"


class _Withheld:
    """Matches left out because their file is protected (module docstring)."""

    def __init__(self, guard: Any, search_path: Path) -> None:
        active = guard is not None and guard(os.fspath(search_path)) is None
        self._guard = guard if active else None
        self._base = os.fspath(search_path) if search_path.is_dir() else ""
        self._cache: dict[bytes, bool] = {}
        self.matches = 0
        self.files: set[str] = set()

    def hides(self, path: bytes, kind: str) -> bool:
        """True when the line of ``path`` must be left out (counted when it is a match)."""
        if self._guard is None:
            return False
        hidden = self._cache.get(path)
        if hidden is None:  # rg prints paths relative to the searched folder (its cwd)
            hidden = self._guard(os.path.join(self._base, os.fsdecode(path))) is not None
            self._cache[path] = hidden
        if hidden and kind == ":":
            self.matches += 1
            self.files.add(os.fsdecode(path))
        return hidden

    def notice(self) -> str:
        count = self.matches
        noun = "match" if count == 1 else "matches"
        files = len(self.files)
        where = "a protected file" if files == 1 else f"{files} protected files"
        return (
            f"{count} {noun} in {where} withheld (their content would go to the model); "
            "reading such a file with the read tool asks the user for approval"
        )

    def details(self) -> dict[str, Any]:
        return {"withheldMatches": self.matches, "withheldFiles": sorted(self.files)}


class _Answer:
    """The tool's answer, built from rg's lines in path order (the peer's limits and notices).

    :meth:`take` one raw line at a time; it says when the answer is complete: at the match limit
    (after the last match's trailing context; one more match proves the limit cut results off)
    or once the output is past the byte limit.
    """

    def __init__(self, fmt: _Formatter, withheld: _Withheld, context: int, limit: float) -> None:
        self.fmt = fmt
        self.withheld = withheld
        self._context = context
        self._limit = limit
        self.output: list[str] = []
        self._size = 0
        self.matches = 0
        self._limit_hit = False  # the last allowed match was seen
        self.limit_reached = False  # and another match proves the limit cut results off (Pi 1.x)
        self._last: tuple[bytes, int] = (b"", 0)
        self.complete = False  # take() said so: the rest of rg's output is not needed

    def take(self, raw: bytes) -> bool:
        """Add one rg line; True (and :attr:`complete`) when nothing after it can change the
        answer."""
        self.complete = self._take(raw)
        return self.complete

    def _take(self, raw: bytes) -> bool:
        parsed = _parse_line(raw)
        if parsed is None:
            return False
        path, number, kind, text = parsed
        if self.withheld.hides(path, kind):
            return False
        if self._limit_hit:
            # Only the trailing context of the last counted match is still shown (a match
            # inside it as context); only one more match proves the limit was reached.
            end = self._last[1] + self._context
            in_window = path == self._last[0] and number <= end
            self.limit_reached = self.limit_reached or kind == ":"
            if self.limit_reached and not (in_window and number < end):
                if in_window:
                    self.output.append(self.fmt.line(path, number, "-", text))
                return True
            if not in_window:
                return False
            kind = "-"
        elif kind == ":":
            self.matches += 1
            if self.matches >= self._limit:
                self._limit_hit = True
                self._last = (path, number)
        line = self.fmt.line(path, number, kind, text)
        self.output.append(line)
        self._size += len(line) + 1
        return self._size > DEFAULT_MAX_BYTES


def _sorted_by_file(output: bytes) -> list[bytes] | None:
    """The lines of an unsorted rg run, each file's block moved to its ``--sort=path`` place.

    rg writes each file's lines as one block, each line starting with the path and a NUL.
    ``None`` when some line has no NUL (a file name holding a newline splits its lines): only the
    sorted plan keeps such lines where they were.
    """
    lines = output.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    blocks: list[tuple[list[bytes], list[bytes]]] = []
    current = None
    for line in lines:
        nul = line.find(b"\0")
        if nul < 0:
            return None
        path = line[:nul]
        if path != current:
            blocks.append((path_sort_key(path), []))
            current = path
        blocks[-1][1].append(line)
    blocks.sort(key=lambda block: block[0])
    return [line for _, block in blocks for line in block]


class GrepTool(BuiltinTool):
    """The ``grep`` tool (:class:`~pi_lsp.agent.tool.Tool` protocol).

    Errors (raised as :class:`ToolError`): ``Path not found: {abs}``; rg's message for an
    invalid regex, naming the model's pattern (:func:`describe_regex_error`); ``ripgrep exited
    with code {n}``; the peer's text when rg is missing. ``No matches found`` is a success.
    """

    name = "grep"
    label = "grep"
    description = DESCRIPTION
    args_model = GrepArgs

    def _rg_args(self, args: GrepArgs, search_path: Path, context: int, *, sort: bool = True) -> list[str]:
        rg_args = [
            "--no-config",
            "--null",
            "--with-filename",
            "--line-number",
            "--no-heading",
            "--color=never",
            "--no-context-separator",
            f"--max-columns={MAX_COLUMNS}",
            "--max-columns-preview",
        ]
        if args.ignore_case:
            rg_args.append("--ignore-case")
        if args.literal:
            rg_args.append("--fixed-strings")
        if context:
            rg_args.append(f"--context={context}")
        if args.glob:  # rg never matches a leading "./"; "!" still negates (Pi 1.x)
            rg_args.append("--glob=" + _LEADING_DOT_SLASH.sub(r"\1", args.glob))
        rg_args += walk_args(search_path, sort=sort)  # after the user's glob, so `.git` stays excluded
        # rg roots globs at its working directory, so a directory is searched from inside as "."
        # (the glob is relative to ``path``, Pi 1.x); a file is searched by its path
        rg_args += ["--", args.pattern, "." if search_path.is_dir() else os.fspath(search_path)]
        return rg_args

    async def execute(self, args: GrepArgs, ctx: ToolContext) -> ToolResult:
        """Search and format as the peer does (module docstring); see the class for errors."""
        if ctx.signal.aborted:
            raise ToolError(ABORTED_MESSAGE)
        try:
            search_path = resolve_to_cwd(args.path or ".", self.env.cwd)
        except NulInPathError as exc:  # Pi's existsSync answers false for it
            raise ToolError(f"Path not found: {exc.path}") from None
        try:
            is_directory = search_path.is_dir()
            kind = special_kind(search_path.stat().st_mode)
        except (OSError, ValueError):
            raise ToolError(f"Path not found: {search_path}") from None
        if kind is not None:  # ripgrep would block reading a FIFO until a writer comes (issue 12)
            raise ToolError(
                f"{search_path} is {kind}, not a regular file or directory; grep only searches "
                "regular files and directories."
            )
        context = int(args.context) if args.context and args.context > 0 else 0
        limit = max(1.0, args.limit if args.limit is not None else DEFAULT_LIMIT)
        answer = _Answer(
            _Formatter(search_path, is_directory), _Withheld(self.env.content_guard, search_path),
            context, limit,
        )
        run = await self._search(args, search_path, is_directory, context, answer)
        withheld = answer.withheld
        if not (run.killed or answer.complete) and run.returncode not in (0, 1) and answer.matches == 0:
            if not run.stderr:
                raise ToolError(f"ripgrep exited with code {run.returncode}")
            pattern = spawn_args([args.pattern])[0]  # as rg got it
            raise ToolError(await describe_regex_error(run.stderr, pattern, self._parse_errors))
        if answer.matches == 0:
            if withheld.matches:
                return ToolResult.text("No matches found" + notices_suffix([withheld.notice()]), withheld.details())
            return ToolResult.text("No matches found")
        return self._result(
            answer.output, limit if answer.limit_reached else None, answer.fmt.lines_truncated, withheld
        )

    async def _search(
        self, args: GrepArgs, search_path: Path, is_directory: bool, context: int, answer: "_Answer"
    ) -> RipgrepRun:
        """Feed rg's lines to ``answer`` in path order; return the finished run.

        A directory is first searched by rg's parallel walk, its output read whole and sorted by
        file here (rg prints each file's lines as one block); when that output passes
        :data:`PARALLEL_OUTPUT_BUDGET` (many matches: the answer is near the front of the tree)
        rg is stopped and a sorted rg streams instead, stopped as soon as the answer is known.
        """
        cwd = search_path if is_directory else None
        if is_directory:
            async with RipgrepRun(
                self._rg_args(args, search_path, context, sort=False), processes=self.env.processes, cwd=cwd
            ) as run:
                output = await run.read_all(PARALLEL_OUTPUT_BUDGET)
            ordered = None if output is None else _sorted_by_file(output)
            if ordered is not None:
                for raw in ordered:
                    if answer.take(raw):
                        break
                return run
        async with RipgrepRun(
            self._rg_args(args, search_path, context), processes=self.env.processes, cwd=cwd
        ) as run:
            async for raw in run.lines():
                if answer.take(raw):
                    run.stop()
                    break
        return run

    async def _parse_errors(self, pattern: str) -> str:
        """rg's stderr for ``pattern`` searched in nothing (``""`` when it parses), for
        :func:`describe_regex_error`."""
        try:
            rg_args = ["--no-config", "--", pattern, os.devnull]
            async with RipgrepRun(rg_args, processes=self.env.processes) as run:
                async for _ in run.lines():
                    pass
        except ToolError:
            return ""
        return run.stderr

    @staticmethod
    def _result(output: list[str], limit: float | None, lines_truncated: bool, withheld: "_Withheld") -> ToolResult:
        truncation = truncate_head("\n".join(output), max_lines=sys.maxsize)
        notices: list[str] = []
        details: dict[str, Any] = {}
        if withheld.matches:
            notices.append(withheld.notice())
            details.update(withheld.details())
        if limit is not None:
            notices.append(
                f"{js_number(limit)} matches limit reached. "
                f"Use limit={js_number(limit * 2)} for more, or refine pattern"
            )
            details["matchLimitReached"] = int(limit) if limit == int(limit) else limit
        if truncation.truncated:
            notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
            details["truncation"] = truncation.to_details()
        if lines_truncated:
            notices.append(
                f"Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. "
                "Use read tool to see full lines"
            )
            details["linesTruncated"] = True
        return ToolResult.text(truncation.content + notices_suffix(notices), details or None)
