"""The bracketed notices grep, find and ls append to their output (pi-behaviour.md 2.5-2.7).

Several notices share one bracket, joined with ``. ``, after a blank line:
``[100 matches limit reached. Use limit=200 for more, or refine pattern. 50.0KB limit reached]``.
Numbers print as JavaScript prints them (``3``, not ``3.0``), since limits arrive as JSON numbers.
"""

from __future__ import annotations


def js_number(value: float) -> str:
    """``value`` as JavaScript's ``String(n)`` would print it for ordinary finite numbers:
    integral values without a fraction (``6``), others in shortest form (``2.5``)."""
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


def notices_suffix(notices: list[str]) -> str:
    """``"\\n\\n[a. b]"`` for a non-empty list, ``""`` otherwise."""
    if not notices:
        return ""
    return "\n\n[" + ". ".join(notices) + "]"
