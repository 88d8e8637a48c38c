"""What an edit reports in ``details``: Pi's display diff, a unified patch and the first changed line.

Both diffs compare the LF original with the LF result (BOM removed, line breaks ``\\n``), as Pi
does; line numbers are 1-based. The display diff is Pi's ``generateDiffString`` format (peer
0.73.1); the patch and ``firstChangedLine`` are Pi 0.83's additions (design.md section 7).
"""

from __future__ import annotations

from dataclasses import dataclass

from pi_lsp.tools.text.line_diff import Part, diff_lines

CONTEXT_LINES = 4
"""Context lines around each change, in the display diff and the patch (Pi's value)."""


@dataclass(frozen=True)
class EditDiff:
    """The ``details`` of a successful edit.

    Attributes:
        diff: Pi's display diff: ``+{n} {line}`` (new numbering), ``-{n} {line}`` (old numbering),
            `` {n} {line}`` context; numbers right-aligned to the width of the larger line count
            (``split("\\n")`` count, so a trailing newline counts one more); up to
            :data:`CONTEXT_LINES` context lines around changes, longer gaps shown as a line of
            padding plus ``...``, regions far from any change left out. Lines joined by ``\\n``.
        patch: a unified diff with only ``--- {path}`` / ``+++ {path}`` headers, ``@@ -a,b +c,d @@``
            hunks (counts always written, as jsdiff does) with :data:`CONTEXT_LINES` context lines
            and ``\\ No newline at end of file`` markers; it applies to the LF original.
        first_changed_line: 1-based line in the new text of the first change; ``None`` when
            nothing changed.
    """

    diff: str
    patch: str
    first_changed_line: int | None

    def to_details(self) -> dict[str, object]:
        """The JSON ``details`` object: ``{diff, patch, firstChangedLine}``."""
        return {"diff": self.diff, "patch": self.patch, "firstChangedLine": self.first_changed_line}


def edit_diff(path: str, old: str, new: str) -> EditDiff:
    """Compute :class:`EditDiff` for the LF texts ``old`` and ``new``; ``path`` names both patch sides."""
    parts = diff_lines(old, new)
    diff, first = display_diff(parts)
    return EditDiff(diff=diff, patch=unified_patch(path, parts), first_changed_line=first)


def display_diff(parts: list[Part]) -> tuple[str, int | None]:
    """Pi's display diff of ``parts`` (a line diff) and the first changed line."""
    old_breaks = sum(part.newlines for part in parts if part.kind != "+")
    new_breaks = sum(part.newlines for part in parts if part.kind != "-")
    width = len(str(max(old_breaks, new_breaks) + 1))
    blank = " " * width
    out: list[str] = []
    old_num = new_num = 1
    first: int | None = None

    def context(lines: list[str]) -> None:
        nonlocal old_num, new_num
        for line in lines:
            out.append(f" {str(old_num).rjust(width)} {line}")
            old_num += 1
            new_num += 1

    def skip(count: int) -> None:
        nonlocal old_num, new_num
        out.append(f" {blank} ...")
        old_num += count
        new_num += count

    last_was_change = False
    for i, part in enumerate(parts):
        if part.kind != " ":
            if first is None:
                first = new_num
            for line in part.lines():
                if part.kind == "+":
                    out.append(f"+{str(new_num).rjust(width)} {line}")
                    new_num += 1
                else:
                    out.append(f"-{str(old_num).rjust(width)} {line}")
                    old_num += 1
            last_was_change = True
            continue
        count = part.line_count()
        next_is_change = i + 1 < len(parts)
        if last_was_change and next_is_change:
            if count <= 2 * CONTEXT_LINES:
                context(part.lines())
            else:
                context(part.head(CONTEXT_LINES))
                skip(count - 2 * CONTEXT_LINES)
                context(part.tail(CONTEXT_LINES))
        elif last_was_change:
            shown = part.head(CONTEXT_LINES)
            context(shown)
            if count > len(shown):
                skip(count - len(shown))
        elif next_is_change:
            skipped = max(0, count - CONTEXT_LINES)
            if skipped:
                skip(skipped)
            context(part.tail(count - skipped))
        else:
            old_num += count
            new_num += count
        last_was_change = False
    return "\n".join(out), first


def unified_patch(path: str, parts: list[Part]) -> str:
    """A unified diff of ``parts`` with ``--- path`` / ``+++ path`` headers (jsdiff's hunk rules).

    Consecutive changes whose common gap is at most ``2 * CONTEXT_LINES`` lines share one hunk.
    Ends with ``\\n``; with no change it is just the two header lines.
    """
    out = [f"--- {path}", f"+++ {path}"]
    hunk: list[str] = []
    old_line = new_line = 1
    old_start = new_start = 0
    in_hunk = False

    def emit(lines: list[str], marker: str, last_has_newline: bool) -> None:
        for j, line in enumerate(lines):
            hunk.append(marker + line)
            if j == len(lines) - 1 and not last_has_newline:
                hunk.append("\\ No newline at end of file")

    for i, part in enumerate(parts):
        ends_nl = part.ends_with_newline
        if part.kind != " ":
            if not in_hunk:
                in_hunk = True
                hunk = []
                old_start, new_start = old_line, new_line
                if i > 0:
                    before = parts[i - 1].tail(CONTEXT_LINES)
                    emit(before, " ", True)
                    old_start -= len(before)
                    new_start -= len(before)
            lines = part.lines()
            emit(lines, "+" if part.kind == "+" else "-", ends_nl)
            if part.kind == "+":
                new_line += len(lines)
            else:
                old_line += len(lines)
            continue
        count = part.line_count()
        if in_hunk:
            if count <= 2 * CONTEXT_LINES and i < len(parts) - 1:
                emit(part.lines(), " ", ends_nl)
            else:
                shown = part.head(CONTEXT_LINES)
                emit(shown, " ", ends_nl or len(shown) < count)
                old_count = old_line - old_start + len(shown)
                new_count = new_line - new_start + len(shown)
                out.append(_hunk_header(old_start, old_count, new_start, new_count))
                out.extend(hunk)
                in_hunk = False
        old_line += count
        new_line += count
    if in_hunk:
        out.append(_hunk_header(old_start, old_line - old_start, new_start, new_line - new_start))
        out.extend(hunk)
    return "\n".join(out) + "\n"


def _hunk_header(old_start: int, old_count: int, new_start: int, new_count: int) -> str:
    # an empty side names the line before it (unified diff convention, as jsdiff writes it)
    if old_count == 0:
        old_start -= 1
    if new_count == 0:
        new_start -= 1
    return f"@@ -{old_start},{old_count} +{new_start},{new_count} @@"
