"""JavaScript's words for a JSON syntax error, from Python's :class:`json.JSONDecodeError`.

Pi reports a tool call's malformed arguments with the message of V8's ``JSON.parse`` (Node 20):
``Unterminated string in JSON at position 9``, ``Unexpected end of JSON input``... The model reads
that text, so pi-lsp says the same for the common cases. Positions are 0-based UTF-16 code unit
offsets in V8; here they are code point offsets (equal for BMP text).
"""

from __future__ import annotations

import json

_WS = " \t\n\r"


def _innermost_container(text: str, end: int) -> str | None:
    """``"{"`` or ``"["``: the innermost container open at ``end`` (strings skipped), else None."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text[:end]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _past_literal_prefix(text: str, pos: int) -> int:
    for word in ("null", "true", "false"):
        if text.startswith(word[0], pos):
            k = 0
            while k < len(word) and text.startswith(word[k], pos + k):
                k += 1
            return pos + k
    return pos


def _unexpected_token(text: str, pos: int) -> str:
    token = text[pos]
    if len(text) <= 40:
        return f'Unexpected token \'{token}\', "{text}" is not valid JSON'
    start, stop = max(0, pos - 10), min(len(text), pos + 10)
    before = "..." if start > 0 else ""
    after = "..." if stop < len(text) else ""
    return f'Unexpected token \'{token}\', {before}"{text[start:stop]}"{after} is not valid JSON'


def js_json_error(text: str, exc: ValueError) -> str:
    """V8's message for ``JSON.parse(text)`` failing, given Python's error ``exc`` for ``text``.

    Errors that are not :class:`json.JSONDecodeError` (pi-lsp's own: ``NaN``, nesting depth)
    keep their message.
    """
    if not isinstance(exc, json.JSONDecodeError):
        return str(exc)
    msg, pos, n = exc.msg, exc.pos, len(text)
    if msg.startswith("Expecting value") and pos < n:
        pos = _past_literal_prefix(text, pos)  # V8 fails inside "nul", "tru", "fals"
    if msg.startswith("Unterminated string"):
        return f"Unterminated string in JSON at position {n}"
    if pos >= n:
        if msg.startswith("Expecting ',' delimiter"):
            pass  # V8 names the missing delimiter, below
        else:
            return "Unexpected end of JSON input"
    if msg.startswith("Expecting ',' delimiter"):
        if pos < n and text[pos] in "0123456789-":
            return f"Unexpected number in JSON at position {pos}"
        if _innermost_container(text, pos) == "[":
            return f"Expected ',' or ']' after array element in JSON at position {pos}"
        return f"Expected ',' or '}}' after property value in JSON at position {pos}"
    if msg.startswith("Expecting ':' delimiter"):
        return f"Expected ':' after property name in JSON at position {pos}"
    if msg.startswith("Expecting property name"):
        previous = text[:pos].rstrip(_WS)[-1:]
        if previous == ",":
            return f"Expected double-quoted property name in JSON at position {pos}"
        return f"Expected property name or '}}' in JSON at position {pos}"
    if msg.startswith("Invalid control character"):
        return f"Bad control character in string literal in JSON at position {pos}"
    if msg.startswith("Invalid \\uXXXX"):
        return f"Bad Unicode escape in JSON at position {pos + 1}"
    if msg.startswith("Invalid \\escape"):
        return f"Bad escaped character in JSON at position {pos + 1}"
    if msg.startswith("Extra data"):
        return f"Unexpected non-whitespace character after JSON at position {pos}"
    return _unexpected_token(text, pos)
