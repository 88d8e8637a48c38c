"""Default context windows (tokens) of common models, for ``pi.contextWindow`` when it is unset.

:func:`default_context_window` matches the model id case-insensitively by substring, first match
wins (so a router's ``anthropic/claude-...`` id matches too). Figures are the vendors' published
windows; an unknown model gets :data:`FALLBACK_CONTEXT_WINDOW`, and a smaller real window is still
caught by the provider's context-overflow error, which triggers compaction as a fallback.
"""

from __future__ import annotations

FALLBACK_CONTEXT_WINDOW = 128_000

KNOWN_CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    ("claude", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-5", 400_000),
    ("o4-mini", 200_000),
    ("o3", 200_000),
    ("gemini-2.5", 1_048_576),
    ("qwen3-coder", 262_144),
    ("qwen2.5-coder", 32_768),
    ("deepseek", 128_000),
)
"""(substring of the model id, window in tokens), most specific first."""


def default_context_window(model: str | None) -> int:
    """The window of ``model`` from :data:`KNOWN_CONTEXT_WINDOWS`, else the fallback."""
    name = (model or "").lower()
    for key, window in KNOWN_CONTEXT_WINDOWS:
        if key in name:
            return window
    return FALLBACK_CONTEXT_WINDOW
