"""JSON text in and out, as RFC 8259 and JavaScript define it (issue 12, "the wire stays valid").

Every JSON text pi-lsp reads from outside (LSP frames, ``pi-lsp exec`` lines, a provider's stream,
a model's tool-call arguments) goes through :func:`loads`, and every JSON text it sends (LSP frames,
``exec`` output lines) through :func:`dumps`:

- :func:`loads` accepts only JSON: ``NaN``, ``Infinity`` and ``-Infinity`` (which Python's
  ``json`` accepts) are errors, as in JavaScript's ``JSON.parse``; a number too large for a double
  (``1e400``) becomes ``inf`` as in JavaScript. Containers nested deeper than
  :data:`MAX_DEPTH` are refused: the rest of pi-lsp (validation, structuring, formatting)
  recurses, so an unbounded depth would end in ``RecursionError`` far from the input.
- :func:`dumps` never writes ``NaN``/``Infinity``: a non-finite number becomes ``null``, as
  JavaScript's ``JSON.stringify`` does. Lone surrogates are written as ``\\uXXXX`` escapes.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 128
"""The deepest nesting of arrays and objects accepted in a JSON text (the top level is depth 1).

LSP messages nest about 10 deep; Pi's tool arguments 4. 128 leaves room for any real document and
keeps every recursive consumer far from Python's recursion limit (1000 frames)."""


class JsonTextError(ValueError):
    """The text is not JSON that pi-lsp accepts; the message says why (and where, when known)."""


def _reject_constant(name: str) -> Any:
    raise JsonTextError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
"""One strict decoder for every text: ``json.loads`` with an option builds a new one per call."""
_SCAN = _DECODER.scan_once

_ENCODERS: dict[tuple[bool, Any], json.JSONEncoder] = {}
"""Encoders by (``ensure_ascii``, ``default``), reused as ``json.dumps`` would not; kept small."""
_MAX_ENCODERS = 8


def _decode(text: str | bytes) -> Any:
    """``json.loads(text, parse_constant=_reject_constant)`` with the shared decoder (same errors).

    An object with nothing around it (every LSP body, every ``exec`` line) goes to the decoder's
    C scanner directly, without ``JSONDecoder.decode``'s two frames and whitespace matches
    (issue 21); anything else, and any text the scanner does not take whole, is decoded as before
    (so errors keep their messages)."""
    if isinstance(text, bytes):
        # "{" then anything but NUL is what json.detect_encoding calls UTF-8, without its frame
        utf8 = text[:1] == b"{" and text[1:2] != b"\x00"
        text = text.decode("utf-8" if utf8 else json.detect_encoding(text), "surrogatepass")
    elif not isinstance(text, str) or text.startswith("\ufeff"):
        return json.loads(text, parse_constant=_reject_constant)  # its BOM and type errors
    if text[:1] == "{" and text[-1:] == "}":
        try:
            value, end = _SCAN(text, 0)
        except StopIteration:
            pass
        else:
            if end == len(text):
                return value
    return _DECODER.decode(text)


def _encoder(ensure_ascii: bool, default: Any) -> json.JSONEncoder:
    key = (ensure_ascii, default)
    encoder = _ENCODERS.get(key)
    if encoder is None:
        if len(_ENCODERS) >= _MAX_ENCODERS:
            _ENCODERS.clear()
        encoder = _ENCODERS[key] = json.JSONEncoder(ensure_ascii=ensure_ascii, default=default, allow_nan=False)
    return encoder


def depth(value: Any) -> int:
    """How deeply ``value``'s lists and dicts nest (a scalar is 0, ``[]`` is 1); iterative."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def loads(text: str | bytes, *, max_depth: int | None = MAX_DEPTH) -> Any:
    """Parse one JSON text strictly (see the module docstring).

    ``text`` is ``str`` or UTF-8 ``bytes``. Raises :class:`JsonTextError` (a ``ValueError``) for
    text that is not JSON, for ``NaN``/``Infinity`` literals, for nesting deeper than
    ``max_depth`` (``None``: the caller checks with :func:`check_depth` once it knows more about
    the message); ``json.JSONDecodeError`` (also a ``ValueError``) keeps its position for syntax
    errors; ``UnicodeDecodeError`` (a ``ValueError`` too) for bytes that are not UTF-8.
    """
    try:
        value = _decode(text)
    except RecursionError:
        raise JsonTextError(f"JSON nested deeper than {max_depth or MAX_DEPTH} levels") from None
    # valid JSON nested d levels deep holds at least 2 * d characters: short texts need no count
    if max_depth is not None and len(text) > 2 * max_depth and may_nest_deeper(text, max_depth):
        check_depth(value, max_depth)
    return value


def may_nest_deeper(text: str | bytes, max_depth: int = MAX_DEPTH) -> bool:
    """False when ``text`` has too few brackets to nest deeper than ``max_depth`` (a fast C-level
    count that spares :func:`check_depth`'s walk for almost every message); True otherwise."""
    if isinstance(text, str):
        return text.count("{") + text.count("[") > max_depth
    return text.count(b"{") + text.count(b"[") > max_depth


def check_depth(value: Any, max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`JsonTextError` when ``value`` nests deeper than ``max_depth`` (see :func:`depth`)."""
    if isinstance(value, (dict, list)) and depth(value) > max_depth:
        raise JsonTextError(f"JSON nested deeper than {max_depth} levels")


def dumps(value: Any, *, ensure_ascii: bool = True, default: Any = None, **kwargs: Any) -> str:
    """``json.dumps`` that always produces valid JSON (RFC 8259).

    Tries ``allow_nan=False`` first (the common case costs nothing extra); when a ``NaN`` or an
    infinity is found, the value is encoded once with them (via ``default`` for objects), read
    back with each one as ``null``, and encoded again. ``kwargs`` go to ``json.dumps``
    (``separators``, ``sort_keys``...). Raises ``TypeError`` for objects ``default`` cannot encode.
    """
    try:
        if kwargs:
            return json.dumps(value, ensure_ascii=ensure_ascii, default=default, allow_nan=False, **kwargs)
        return _encoder(ensure_ascii, default).encode(value)
    except ValueError as exc:
        if "Out of range float" not in str(exc):
            raise
    loose = json.dumps(value, ensure_ascii=True, default=default, allow_nan=True)
    cleaned = json.loads(loose, parse_constant=lambda _name: None)
    return json.dumps(cleaned, ensure_ascii=ensure_ascii, allow_nan=False, **kwargs)
