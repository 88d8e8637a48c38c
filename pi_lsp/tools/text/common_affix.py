"""The common prefix and suffix of two texts, at ``memcmp`` speed: the first step of every diff here.

Both the minimal ``TextEdit``\\ s (:mod:`pi_lsp.editor.text_edits`) and the edit tool's line diff
(:mod:`pi_lsp.tools.text.line_diff`) cut off what the two texts share before diffing the rest, so a
one-line change in a 60,000-line file costs a few slice comparisons instead of a walk over every
line. Whole chunks of :data:`CHUNK` code points are compared first (C speed, cache-sized copies),
then the first differing chunk is bisected. Offsets and lengths are code points.
"""

from __future__ import annotations

CHUNK = 65536
"""Code points compared per slice (cache-sized copies; bisecting whole texts would copy megabytes)."""


def common_prefix_length(a: str, b: str) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (code points)."""
    limit = min(len(a), len(b))
    lo = 0
    while lo < limit and a[lo : lo + CHUNK] == b[lo : lo + CHUNK]:
        lo += CHUNK
    if lo >= limit:
        return limit
    hi = min(lo + CHUNK, limit)  # the first difference is in a[lo:hi]
    while lo < hi:  # largest n with a[:n] == b[:n]
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def common_suffix_length(a: str, b: str, limit: int) -> int:
    """Length of the longest common suffix of ``a`` and ``b``, at most ``limit`` code points.

    ``limit`` keeps the suffix from overlapping a prefix already cut off: pass
    ``min(len(a), len(b)) - prefix``.
    """
    la, lb = len(a), len(b)
    lo = 0
    while lo < limit:
        step = min(CHUNK, limit - lo)
        if a[la - lo - step : la - lo] != b[lb - lo - step : lb - lo]:
            break
        lo += step
    else:
        return limit
    hi = min(lo + CHUNK, limit)  # the last difference is within the next ``hi - lo`` code points
    while lo < hi:  # largest n with equal last n code points
        mid = (lo + hi + 1) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid - 1
    return lo
