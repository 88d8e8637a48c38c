"""URL slugs."""

import re
import unicodedata


def slugify(title):
    """Turn a title into a URL slug: lower case, words joined by '-'."""
    text = title.lower()
    text = re.sub(r"[^a-z0-9]+", "-", text)
    return text
