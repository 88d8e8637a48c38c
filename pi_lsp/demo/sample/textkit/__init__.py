"""textkit: tiny text helpers used by the pi-lsp demo."""

from textkit.slug import slugify
from textkit.wrap import shorten

__all__ = ["slugify", "shorten"]
