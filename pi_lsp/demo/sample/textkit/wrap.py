"""Shortening long lines for display."""


def shorten(text, width):
    """Cut text to at most width characters, ending with an ellipsis when cut."""
    if len(text) <= width:
        return text
    return text[: width - 1] + "…"
