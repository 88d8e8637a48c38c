"""The ``find`` tool: files and directories by glob pattern (pi-behaviour.md 2.6, design.md 7).

The peer's parameters, limits, output and notices; the walk is ripgrep's (``rg --files``), so the
ignore rules are the same as grep's: hidden entries included, ``.gitignore`` honoured inside and
outside git repositories, hierarchically (``a/.gitignore`` affects only ``a/``), ``.ignore`` and
``.rgignore`` too, ``.git`` never listed. Results are sorted by path (component by component,
byte order), directories carry a trailing ``/`` and come right before their contents.

Directories are derived from the files rg lists: a directory appears when it holds at least one
file that is not ignored (fd would also list empty directories). Symbolic links are not followed
and not listed (rg's walk skips them).

Two plans give the same answer (issue 21). A name pattern (no ``/``) is answered from rg's
unsorted listing read whole and searched as one string (name_scan.py), only the matches sorted
here. A path pattern, a listing too big or not UTF-8, or more matches than are worth sorting
take the sorted plan: ``rg --sort=path`` (single-threaded) read in large pieces, each path tested
in turn, rg stopped as soon as the limit or the byte limit is reached.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pi_lsp.agent.tool import ABORTED_MESSAGE, ToolContext, ToolError, ToolResult
from pi_lsp.tools.builtin_tool import BuiltinTool
from pi_lsp.tools.search.glob_pattern import FindPattern, GlobError, compile_find_pattern
from pi_lsp.tools.file_io.paths import resolve_directory
from pi_lsp.tools.search.name_scan import TooManyMatches, name_scan
from pi_lsp.tools.search.ripgrep import RipgrepRun, walk_args
from pi_lsp.tools.search.search_notices import js_number, notices_suffix
from pi_lsp.tools.text.truncate import DEFAULT_MAX_BYTES, format_size, truncate_head

_LEADING_DOT_SLASH = re.compile(r"^(?:\./)+")

LISTING_BUDGET = 16 * 1024 * 1024
"""Bytes of ``rg --files`` output the name plan reads (about 300,000 paths) before it gives way
to the sorted plan, which can stop early."""

SORT_BUDGET = 4096
"""Matches the name plan sorts at most (or ``limit + 1`` when larger); past it the sorted plan
stops sooner."""

DEFAULT_LIMIT = 1000
"""Results returned when the call gives no ``limit`` (the peer's default)."""

DESCRIPTION = (
    "Search for files by glob pattern. Returns matching file paths relative to the search "
    "directory. Respects .gitignore. Output is truncated to 1000 results or 50KB (whichever is "
    "hit first)."
)


class FindArgs(BaseModel):
    """Arguments of ``find`` (the peer's schema; open object)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True, defer_build=True)

    pattern: str = Field(
        description="Glob pattern to match files, e.g. '*.ts', '**/*.json', or 'src/**/*.spec.ts'"
    )
    path: str | None = Field(
        default=None, description="Directory to search in (default: current directory)"
    )
    limit: float | None = Field(
        default=None, description="Maximum number of results (default: 1000)"
    )


class _Results:
    """Matching entries in path order, up to the limit and the byte limit."""

    def __init__(self, limit: float) -> None:
        self._limit = limit
        self.results: list[str] = []
        self.size = 0
        self.limit_reached = False

    def add(self, shown: str) -> bool:
        """Add the next matching entry; True when the caller should stop (limit or bytes)."""
        if len(self.results) >= self._limit:
            # one match past the limit proves the limit cut results off (Pi 1.x; 0.73.1 said
            # "limit reached" at exactly ``limit`` results)
            self.limit_reached = True
            return True
        self.results.append(shown)
        self.size += len(shown) + 1
        return self.size > DEFAULT_MAX_BYTES


class _Collector:
    """Turns rg's sorted file list into sorted matching files and directories, up to a limit."""

    def __init__(self, search_path: Path, pattern: FindPattern, results: _Results) -> None:
        self._root = os.fsdecode(search_path).rstrip("/")
        self._prefix = os.fsencode(search_path).rstrip(b"/") + b"/"
        self._pattern = pattern
        self._open_dirs: list[str] = []  # the directory chain of the previous file
        self._results = results

    def _offer(self, parts: list[str], is_dir: bool) -> bool:
        """Add one entry if it matches; True when the caller should stop (limit or bytes)."""
        relative = "/".join(parts)
        if self._pattern.matches(parts[-1], relative, f"{self._root}/{relative}"):
            return self._results.add(relative + "/" if is_dir else relative)
        return False

    def add_file(self, raw: bytes) -> bool:
        """Take one path from ``rg --files``; True when enough results were collected."""
        if raw.startswith(self._prefix):
            raw = raw[len(self._prefix) :]
        parts = raw.decode("utf-8", "replace").split("/")
        dirs = parts[:-1]
        common = 0
        while (
            common < len(self._open_dirs)
            and common < len(dirs)
            and self._open_dirs[common] == dirs[common]
        ):
            common += 1
        del self._open_dirs[common:]
        for depth in range(common, len(dirs)):
            self._open_dirs.append(dirs[depth])
            if self._offer(dirs[: depth + 1], is_dir=True):
                return True
        return self._offer(parts, is_dir=False)


class FindTool(BuiltinTool):
    """The ``find`` tool (:class:`~pi_lsp.agent.tool.Tool` protocol).

    Errors (:class:`ToolError`): ``Path not found: {abs}``, ``Not a directory: {abs}``,
    ``Invalid glob pattern '{p}': {reason}``, ``Invalid limit: ...`` for a limit below 1 (the peer
    hands it to fd, which lists everything for 0 and fails for negatives), rg failures.
    ``No files found matching pattern`` is a success.
    """

    name = "find"
    label = "find"
    description = DESCRIPTION
    args_model = FindArgs

    async def execute(self, args: FindArgs, ctx: ToolContext) -> ToolResult:
        """List matching entries (module docstring); see the class for errors."""
        if ctx.signal.aborted:
            raise ToolError(ABORTED_MESSAGE)
        search_path = resolve_directory(args.path, self.env.cwd)
        limit = args.limit if args.limit is not None else DEFAULT_LIMIT
        if limit < 1:
            raise ToolError(f"Invalid limit: {js_number(limit)}. Use a limit of 1 or more.")
        cleaned = _LEADING_DOT_SLASH.sub("", args.pattern)  # never matches a relative path (Pi 1.x)
        try:
            pattern = compile_find_pattern(cleaned)
        except GlobError as exc:
            raise ToolError(f"Invalid glob pattern '{args.pattern}': {exc}") from None
        found = _Results(limit)
        run = await self._list_by_name(search_path, cleaned, found, limit)
        if run is None:
            run = await self._list_sorted(search_path, pattern, found)
        if not run.killed and run.returncode not in (0, 1) and not found.results:
            message = run.stderr.removeprefix("rg: ")
            raise ToolError(message or f"ripgrep exited with code {run.returncode}")
        if not found.results:
            return ToolResult.text("No files found matching pattern")
        truncation = truncate_head("\n".join(found.results), max_lines=sys.maxsize)
        notices: list[str] = []
        details: dict[str, Any] = {}
        if found.limit_reached:
            notices.append(
                f"{js_number(limit)} results limit reached. "
                f"Use limit={js_number(limit * 2)} for more, or refine pattern"
            )
            details["resultLimitReached"] = int(limit) if limit == int(limit) else limit
        if truncation.truncated:
            notices.append(f"{format_size(DEFAULT_MAX_BYTES)} limit reached")
            details["truncation"] = truncation.to_details()
        return ToolResult.text(truncation.content + notices_suffix(notices), details or None)

    async def _list_by_name(
        self, search_path: Path, pattern: str, found: _Results, limit: float
    ) -> RipgrepRun | None:
        """The name plan (module docstring): rg's unsorted walk, its whole listing searched as one
        string (name_scan.py), the matches sorted here.

        ``None`` (nothing added to ``found``) when the plan does not apply: a pattern with ``/``
        or NUL, a listing over :data:`LISTING_BUDGET` bytes or not UTF-8, or more than
        :data:`SORT_BUDGET` (or ``limit``) matches, where the sorted plan stops sooner.
        """
        if name_scan(pattern, True) is None:
            return None
        root = os.fspath(search_path)
        # rg prints each path as root + "/" + relative: from inside the directory the root is
        # ".", which halves what rg writes and this reads. Only where no symlink is on the way,
        # so the parent .gitignore files rg finds are the same as from the path as given.
        inside = os.path.realpath(root) == root
        # one thread: listing is mostly printing, and rg's threads contend for stdout (measured
        # on 30,000 files: 31 ms of CPU with one thread, 53 ms with two, and no faster)
        rg_args = ["--no-config", "--files", "--null", "--threads=1", *walk_args(search_path, sort=False)]
        rg_args += ["--", "." if inside else root]
        async with RipgrepRun(rg_args, processes=self.env.processes, cwd=search_path if inside else None) as run:
            output = await run.read_all(LISTING_BUDGET)
        if output is None:
            return None
        try:
            listing = "\0" + output.decode("utf-8")
        except UnicodeDecodeError:  # sorted by bytes, shown with U+FFFD: the sorted plan keeps that
            return None
        if not listing.endswith("\0"):
            listing += "\0"
        prefix = "./" if inside else root.rstrip("/") + "/"
        if listing.count("\0" + prefix) != listing.count("\0") - 1:
            return None  # some path not under the search path as given: keep the sorted plan
        scan = name_scan(pattern, listing.isascii())
        assert scan is not None
        try:
            entries = scan.entries(listing, len(prefix), max(SORT_BUDGET, int(min(limit, sys.maxsize)) + 1))
        except TooManyMatches:
            return None
        for path in sorted(entries, key=_component_key):
            if found.add(path + "/" if entries[path] else path):
                break
        return run

    async def _list_sorted(self, search_path: Path, pattern: FindPattern, found: _Results) -> RipgrepRun:
        """The general plan: rg's sorted walk read in large pieces, each path tested in turn,
        rg stopped as soon as the answer is complete."""
        collector = _Collector(search_path, pattern, found)
        rg_args = ["--no-config", "--files", "--null", *walk_args(search_path)]
        rg_args += ["--", os.fspath(search_path)]
        async with RipgrepRun(rg_args, processes=self.env.processes) as run:
            rest = b""
            async for chunk in run.chunks():
                records = (rest + chunk).split(b"\0")
                rest = records.pop()
                if any(raw and collector.add_file(raw) for raw in records):
                    run.stop()
                    return run
            if rest:
                collector.add_file(rest)
        return run


def _component_key(path: str) -> list[str]:
    """rg's ``--sort=path`` order for valid UTF-8 paths (code points sort as UTF-8 bytes)."""
    return path.split("/")
