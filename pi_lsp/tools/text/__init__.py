"""Text machinery for tool results: edit matching, line diffs, display diffs and truncation."""
