"""JavaScript value semantics that Pi's argument handling shows to models.

Pi runs on Node, so its coercions and messages follow ECMAScript: ``String(n)`` for a number turned
into a string (``1e21`` becomes ``"1e+21"``, ``5.0`` becomes ``"5"``), unary ``+s`` for a string
turned into a number (``" 0x10 "`` is 16, ``""`` is 0, ``"1_0"`` is not a number) and
``JSON.stringify(v, null, 2)`` for the ``Received arguments`` block of a validation error. Python's
``str``/``float``/``json.dumps`` differ in each case, so these helpers reproduce the JS rules
(ECMA-262 sections Number::toString, StringToNumber, JSON.stringify).
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1

# ECMAScript WhiteSpace and LineTerminator code points (trimmed by StringToNumber)
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_PREFIXED = {"0x": 16, "0X": 16, "0o": 8, "0O": 8, "0b": 2, "0B": 2}
_DIGITS = {16: "0123456789abcdefABCDEF", 8: "01234567", 2: "01"}


def js_number_to_string(value: int | float) -> str:
    """``String(value)`` for a JS number (``int`` values are first rounded to a double, as JS does).

    ``NaN`` and the infinities give ``"NaN"``, ``"Infinity"``, ``"-Infinity"``; ``-0`` gives ``"0"``.
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) <= MAX_SAFE_INTEGER:
        return str(value)
    number = to_js_double(value)
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    if number == 0:
        return "0"
    sign = "-" if number < 0 else ""
    # repr() gives the shortest round-tripping digits, as ECMAScript requires
    _, digit_tuple, exponent = Decimal(repr(abs(number))).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = k + int(exponent)  # value = 0.digits * 10**n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"


def to_js_double(value: int | float) -> float:
    """``value`` as the double JS would hold: integers too large for a double become +-Infinity."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def js_string_to_number(text: str) -> float | None:
    """Unary ``+text`` in JS, or ``None`` where JS gives ``NaN``.

    Surrounding JS whitespace is trimmed; empty means 0; ``0x``/``0o``/``0b`` prefixes (unsigned) and
    ``Infinity`` with an optional sign are accepted; Python-only spellings (``1_000``, ``inf``,
    ``nan``) are not. Returns an ``int`` for integral values that fit, else a ``float``.
    """
    s = text.strip(_JS_SPACE)
    if s == "":
        return 0
    if s in ("Infinity", "+Infinity"):
        return math.inf
    if s == "-Infinity":
        return -math.inf
    base = _PREFIXED.get(s[:2])
    if base is not None:
        body = s[2:]
        if not body or any(c not in _DIGITS[base] for c in body):
            return None
        return _exact_or_float(int(body, base))
    if not _DECIMAL.fullmatch(s):
        return None
    number = float(s)
    if number.is_integer() and abs(number) <= MAX_SAFE_INTEGER:
        return int(number)
    return number


def _exact_or_float(number: int) -> int | float:
    return number if abs(number) <= MAX_SAFE_INTEGER else float(number)


def js_json_stringify(value: Any, indent: int = 2) -> str:
    """``JSON.stringify(value, null, indent)`` for JSON-shaped Python values.

    Numbers use :func:`js_number_to_string` (non-finite numbers print ``null``, as in JS); strings are
    escaped as JS does (non-ASCII kept, control characters as ``\\uXXXX`` or short escapes).
    Containers nested deeper than Python's recursion limit raise ``RecursionError``.
    """
    parts: list[str] = []
    _stringify(value, parts, "", " " * indent)
    return "".join(parts)


def _stringify(value: Any, out: list[str], current: str, step: str) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(json.dumps(value, ensure_ascii=False))
    elif isinstance(value, (int, float)):
        if not math.isfinite(to_js_double(value)):
            out.append("null")
        else:
            out.append(js_number_to_string(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = current + step
        out.append("{\n")
        first = True
        for key, item in value.items():
            if not first:
                out.append(",\n")
            first = False
            out.append(inner + json.dumps(str(key), ensure_ascii=False) + ": ")
            _stringify(item, out, inner, step)
        out.append("\n" + current + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = current + step
        out.append("[\n")
        for index, item in enumerate(value):
            if index:
                out.append(",\n")
            out.append(inner)
            _stringify(item, out, inner, step)
        out.append("\n" + current + "]")
    else:
        out.append(json.dumps(str(value), ensure_ascii=False))


_INSPECT_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", "\\": "\\\\"}


def js_inspect_string(text: str) -> str:
    """Node's ``util.inspect(text)`` for a string, as error messages print a received value.

    The quote is ``'``, else ``"`` when the text holds a ``'``, else a backtick when it holds
    both, else ``'`` with ``\\'`` escapes. Control characters and U+007F are ``\\xHH`` (upper-case
    hex) except ``\\b \\t \\n \\f \\r``; lone surrogates are ``\\udXXX`` (lower-case hex).
    """
    if "'" not in text:
        quote = "'"
    elif '"' not in text:
        quote = '"'
    elif "`" not in text and "${" not in text:
        quote = "`"
    else:
        quote = "'"
    out = []
    for ch in text:
        code = ord(ch)
        if ch in _INSPECT_ESCAPES:
            out.append(_INSPECT_ESCAPES[ch])
        elif ch == quote:
            out.append("\\" + ch)
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02X}")
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:x}")
        else:
            out.append(ch)
    return quote + "".join(out) + quote
