"""A line diff of two LF texts (line breaks ``\\n`` only), the base of the edit's display diff and patch.

The diff follows the one Pi uses (jsdiff's ``diffLines``: a line is a token *with* its
``\\n``, so a last line without ``\\n`` differs from the same line with one; Myers' greedy
algorithm, preferring a removal over an insertion on ties), with two speed-ups that keep its
output exactly: the common prefix (whole lines) is cut off first with ``memcmp``-speed slice
comparisons (Myers' first snake does the same), and long equal runs are skipped by galloping
instead of line by line. A middle part
that would need more than :data:`MAX_EDIT_DISTANCE` line edits is reported as one removal followed
by one insertion (a correct, not minimal, diff), so nothing is quadratic.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from pi_lsp.tools.text.common_affix import common_prefix_length, common_suffix_length

MAX_EDIT_DISTANCE = 400
"""Above this many line insertions plus removals the Myers search stops (see the module doc)."""


@dataclass(frozen=True)
class Part:
    """A run of the line diff: ``kind`` is ``" "`` (common), ``"-"`` (removed) or ``"+"`` (added).

    The run is ``source[start:end]`` (``end=None``: to the end), so ``Part(kind, text)`` is a run
    holding ``text``; :func:`diff_lines` points into the compared texts instead of copying the long
    common runs of a small change in a big file. :attr:`text` is its lines joined, each ending in
    ``\\n`` except possibly the file's last line; offsets are code points.
    """

    kind: str
    source: str
    start: int = 0
    end: int | None = None

    @cached_property
    def stop(self) -> int:
        """The end offset in ``source``."""
        return len(self.source) if self.end is None else self.end

    @cached_property
    def text(self) -> str:
        """The run's text (copied out of ``source`` once, when first asked)."""
        if self.start == 0 and self.stop == len(self.source):
            return self.source
        return self.source[self.start : self.stop]

    @cached_property
    def newlines(self) -> int:
        """Number of ``\\n`` in the run (computed once)."""
        return self.source.count("\n", self.start, self.stop)

    @property
    def ends_with_newline(self) -> bool:
        """Whether the run's last character is ``\\n``."""
        return self.stop > self.start and self.source[self.stop - 1] == "\n"

    def line_count(self) -> int:
        """Number of lines in the run."""
        unterminated = self.stop > self.start and not self.ends_with_newline
        return self.newlines + (1 if unterminated else 0)

    def lines(self) -> list[str]:
        """Every line of the run, without its ``\\n``."""
        lines = self.text.split("\n")
        return lines[:-1] if lines[-1] == "" else lines

    def head(self, n: int) -> list[str]:
        """The first ``n`` lines (fewer if the run is shorter), without reading or copying the rest."""
        if n <= 0:
            return []
        source, start, stop = self.source, self.start, self.stop
        cut = start - 1
        for _ in range(n):  # the n-th line break, found from the left
            cut = source.find("\n", cut + 1, stop)
            if cut < 0:
                lines = source[start:stop].split("\n")
                return lines[:-1] if lines[-1] == "" else lines
        return source[start:cut].split("\n")

    def tail(self, n: int) -> list[str]:
        """The last ``n`` lines (fewer if the run is shorter), without reading or copying the rest."""
        source, start, stop = self.source, self.start, self.stop
        if n <= 0 or stop <= start:
            return []
        end = stop - 1 if self.ends_with_newline else stop
        cut = end
        for _ in range(n):  # the n-th line break before the last line's end, found from the right
            cut = source.rfind("\n", start, cut)
            if cut < 0:
                cut = start - 1
                break
        return source[cut + 1 : end].split("\n")


class _Unterminated(str):
    """The file's last line when it has no ``\\n``: never equal to a terminated line."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unterminated) and str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__


def _tokens(text: str) -> list[str]:
    """Lines of ``text`` without their ``\\n``; a last line lacking one is :class:`_Unterminated`."""
    pieces = text.split("\n")
    last = pieces.pop()
    if last:
        pieces.append(_Unterminated(last))
    return pieces


def _snake(old: list[str], new: list[str], x: int, y: int) -> int:
    """How many tokens are equal from ``old[x]``/``new[y]`` on.

    Galloping: chunks of doubling size are compared as list slices (C speed), each token once,
    then the last chunk is bisected; about three comparisons per equal token in all.
    """
    n = min(len(old) - x, len(new) - y)
    if n == 0 or old[x] != new[y]:
        return 0
    good, step = 1, 1
    while good < n:
        step = min(step * 2, n - good)
        if old[x + good : x + good + step] != new[y + good : y + good + step]:
            break
        good += step
    else:
        return good
    lo, hi = good, good + step  # tokens before lo are equal; some token before hi differs
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if old[x + lo : x + mid] == new[y + lo : y + mid]:
            lo = mid
        else:
            hi = mid
    return lo


def _myers(old: list[str], new: list[str]) -> list[tuple[str, int]] | None:
    """Greedy forward Myers over tokens: ``[(kind, count)]`` runs, or None past the distance cap."""
    n, m = len(old), len(new)
    # a path: (x, runs) with runs a linked list (kind, count, previous)
    run0 = None
    common = _snake(old, new, 0, 0)
    if common:
        run0 = (" ", common, None)
    if common >= n and common >= m:
        return _flatten(run0)
    best: dict[int, tuple[int, object]] = {0: (common, run0)}
    min_k, max_k = -(n + m), n + m
    for d in range(1, min(n + m, MAX_EDIT_DISTANCE) + 1):
        for k in range(max(min_k, -d), min(max_k, d) + 1, 2):
            remove = best.pop(k - 1, None)
            add = best.get(k + 1)
            can_add = add is not None and 0 < add[0] - k <= m
            can_remove = remove is not None and remove[0] < n
            if not can_add and not can_remove:
                best.pop(k, None)
                continue
            if not can_remove or (can_add and remove[0] < add[0]):
                x, runs = add[0], _extend(add[1], "+")
            else:
                x, runs = remove[0] + 1, _extend(remove[1], "-")
            y = x - k
            common = _snake(old, new, x, y)
            if common:
                x, y = x + common, y + common
                runs = (" ", common, runs)
            if x >= n and y >= m:
                return _flatten(runs)
            best[k] = (x, runs)
            if x >= n:
                max_k = min(max_k, k - 1)
            if y >= m:
                min_k = max(min_k, k + 1)
    return None


def _extend(runs: object, kind: str) -> tuple:
    if runs is not None and runs[0] == kind:  # type: ignore[index]
        return (kind, runs[1] + 1, runs[2])  # type: ignore[index]
    return (kind, 1, runs)


def _flatten(runs: object) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    while runs is not None:
        out.append((runs[0], runs[1]))  # type: ignore[index]
        runs = runs[2]  # type: ignore[index]
    out.reverse()
    return out


def diff_lines(old: str, new: str) -> list[Part]:
    """The line diff of two LF texts as :class:`Part` runs, in order (adjacent kinds merged).

    Joining the ``" "`` and ``"-"`` parts gives ``old``; the ``" "`` and ``"+"`` parts give ``new``.
    Each part's text is one slice of ``old`` (common and removed runs) or ``new`` (added runs), so
    the long common head and tail of a small change in a big file are copied once, not joined.
    """
    prefix = common_prefix_length(old, new)
    if prefix < len(old) or prefix < len(new):
        prefix = old.rfind("\n", 0, prefix) + 1
    suffix = _suffix_with_margin(old, new, prefix)
    old_tokens = _tokens(old[prefix : len(old) - suffix])
    new_tokens = _tokens(new[prefix : len(new) - suffix])
    runs = _myers(old_tokens, new_tokens)
    if runs is None:
        runs = _replace_all(old_tokens, new_tokens)
    spans: list[list] = []  # [kind, start, end]: old offsets for " " and "-", new offsets for "+"
    if prefix:
        spans.append([" ", 0, prefix])
    x = y = 0
    old_at, new_at = prefix, prefix
    for kind, count in runs:
        if count == 0:
            continue
        if kind == "+":
            size = _span_length(new_tokens, y, count)
            _add_span(spans, "+", new_at, new_at + size)
            new_at += size
            y += count
        else:
            size = _span_length(old_tokens, x, count)
            _add_span(spans, kind, old_at, old_at + size)
            old_at += size
            x += count
            if kind == " ":
                new_at += size
                y += count
    if suffix:
        _add_span(spans, " ", len(old) - suffix, len(old))
    return [Part(kind, new if kind == "+" else old, a, b) for kind, a, b in spans]


def _span_length(tokens: list[str], start: int, count: int) -> int:
    """Code points of ``tokens[start:start+count]`` joined as text (each with its ``\\n``, except
    an unterminated last line)."""
    run = tokens[start : start + count]
    size = sum(map(len, run)) + len(run)
    return size - 1 if run and isinstance(run[-1], _Unterminated) else size


def _add_span(spans: list[list], kind: str, start: int, end: int) -> None:
    if spans and spans[-1][0] == kind and spans[-1][2] == start:
        spans[-1][2] = end
    else:
        spans.append([kind, start, end])


def _suffix_with_margin(old: str, new: str, prefix: int) -> int:
    """Length of the common tail (whole lines, after ``prefix``) left out of the Myers search.

    A margin of unchanged lines (twice the changed region's lines, plus 16) stays in the search,
    so Myers can still slide a change down through repeated lines as jsdiff would; only a change
    inside a run of repeated lines longer than the margin can come out placed differently.
    """
    la = len(old)
    lb = len(new)
    suffix = common_suffix_length(old, new, min(la, lb) - prefix)
    if suffix == 0:
        return 0
    cut_old, cut_new = la - suffix, lb - suffix
    if not all(cut == prefix or text[cut - 1] == "\n" for cut, text in ((cut_old, old), (cut_new, new))):
        nl = old.find("\n", cut_old)
        if nl < 0:
            return 0
        cut_old = nl + 1
    changed = max(old.count("\n", prefix, cut_old), new.count("\n", prefix, lb - (la - cut_old)))
    for _ in range(2 * changed + 16):
        nl = old.find("\n", cut_old)
        if nl < 0:
            return 0
        cut_old = nl + 1
    return la - cut_old


def _replace_all(old: list[str], new: list[str]) -> list[tuple[str, int]]:
    """The fallback past the distance cap: common tail kept, everything else removed then added."""
    tail = 0
    while tail < min(len(old), len(new)) and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    return [("-", len(old) - tail), ("+", len(new) - tail), (" ", tail)]
