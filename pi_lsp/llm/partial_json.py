"""Turning streamed tool-call argument text into a value, the way Pi does (pi-behaviour.md 4.1).

Models stream a tool call's arguments as JSON text in fragments; the text may be cut short (the
``length`` stop reason) or slightly broken (raw newlines inside strings, ``\\d`` in a regex).
:func:`parse_streaming_json` never fails and follows pi-ai's ``parseStreamingJson``:

1. strict JSON (``json.loads``, with ``NaN``/``Infinity`` refused as in JavaScript);
2. a repair pass (:func:`repair_json`): raw control characters inside strings are escaped and a
   backslash before a character that cannot follow one is doubled; strict parsing again;
3. a partial parse (:func:`parse_partial`) of the text, then of the repaired text: a truncated
   document yields what was complete (objects keep complete members and a trailing partial
   string; arrays keep complete items);
4. otherwise ``{}``; empty or blank text is ``{}`` too.

No "invalid JSON" error ever reaches the model: a call whose arguments could not be recovered
fails the tool's validation for its required fields instead.
"""

from __future__ import annotations

import re
from typing import Any

from pi_lsp.llm import json_text
from pi_lsp.llm.json_errors import js_json_error

_VALID_ESCAPES = frozenset('"\\/bfnrtu')
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_SHORT_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_WS = " \t\n\r"


class _Partial(Exception):
    """The text ended (or broke) before a value was complete."""


def loads_strict(text: str) -> Any:
    """``json.loads`` as strict as JavaScript's ``JSON.parse`` (no ``NaN``/``Infinity``), nesting
    bounded by :data:`~pi_lsp.llm.json_text.MAX_DEPTH` (:func:`pi_lsp.llm.json_text.loads`).

    Raises ``ValueError`` (``json.JSONDecodeError`` is one) on anything that is not JSON.
    """
    return json_text.loads(text)


def repair_json(text: str) -> str:
    """Repair string literals: escape raw control characters (U+0000..U+001F) and double a
    backslash that starts no valid escape (also a lone trailing one). Text outside strings is
    untouched. Returns the repaired text (equal to ``text`` when nothing needed repair)."""
    out: list[str] = []
    in_string = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if not in_string:
            out.append(ch)
            in_string = ch == '"'
            i += 1
            continue
        if ch == '"':
            out.append(ch)
            in_string = False
        elif ch == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if nxt == "u" and _HEX4.fullmatch(text, i + 2, i + 6):
                out.append(text[i : i + 6])
                i += 6
                continue
            if nxt and nxt != "u" and nxt in _VALID_ESCAPES:
                out.append(text[i : i + 2])
                i += 2
                continue
            out.append("\\\\")
        elif ch < " ":
            out.append(_SHORT_ESCAPES.get(ch) or f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def parse_json_with_repair(text: str) -> Any:
    """Strict parse, then strict parse of :func:`repair_json`'s output; raises ``ValueError``
    (the first parse's error) when neither works."""
    try:
        return loads_strict(text)
    except ValueError:
        repaired = repair_json(text)
        if repaired == text:
            raise
        return loads_strict(repaired)


class _PartialParser:
    """Recursive descent over possibly truncated JSON; containers keep what was complete."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.n = len(text)

    def skip_ws(self) -> None:
        while self.i < self.n and self.s[self.i] in _WS:
            self.i += 1

    def value(self) -> Any:
        self.skip_ws()
        if self.i >= self.n:
            raise _Partial("end of input")
        ch = self.s[self.i]
        if ch == '"':
            return self.string()
        if ch == "{":
            return self.obj()
        if ch == "[":
            return self.arr()
        for word, val in (("null", None), ("true", True), ("false", False)):
            rest = self.s[self.i : self.i + len(word)]
            if rest == word or (self.i + len(rest) == self.n and word.startswith(rest) and rest):
                self.i += len(rest)
                return val
        return self.number()

    def string(self) -> str:
        start = self.i
        self.i += 1
        escaped = False
        while self.i < self.n:
            ch = self.s[self.i]
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                self.i += 1
                return loads_strict(self.s[start : self.i])
            self.i += 1
        # truncated: drop a dangling escape, close the string, then retry without the last escape
        body = self.s[start : self.n - 1] if escaped else self.s[start:]
        try:
            return loads_strict(body + '"')
        except ValueError:
            cut = body.rfind("\\")
            return loads_strict(body[:cut] + '"') if cut > 0 else ""

    def number(self) -> float | int:
        start = self.i
        while self.i < self.n and self.s[self.i] not in ",]}" + _WS:
            self.i += 1
        token = self.s[start : self.i]
        for candidate in (token, token.rstrip(".eE+-")):
            try:
                value = loads_strict(candidate)
            except ValueError:
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                return value
        raise _Partial(f"not a number: {token[:20]!r}")

    def obj(self) -> dict[str, Any]:
        self.i += 1
        result: dict[str, Any] = {}
        try:
            while True:
                self.skip_ws()
                if self.i >= self.n:
                    return result
                if self.s[self.i] == "}":
                    self.i += 1
                    return result
                if self.s[self.i] == ",":
                    self.i += 1
                    continue
                if self.s[self.i] != '"':
                    raise _Partial("expected a key")
                key = self.string()
                self.skip_ws()
                if self.i >= self.n or self.s[self.i] != ":":
                    return result
                self.i += 1
                result[key] = self.value()
        except (_Partial, ValueError):
            return result

    def arr(self) -> list[Any]:
        self.i += 1
        result: list[Any] = []
        try:
            while True:
                self.skip_ws()
                if self.i >= self.n:
                    return result
                if self.s[self.i] == "]":
                    self.i += 1
                    return result
                if self.s[self.i] == ",":
                    self.i += 1
                    continue
                result.append(self.value())
        except (_Partial, ValueError):
            return result


def parse_partial(text: str) -> Any:
    """Parse the longest sensible value from possibly truncated JSON text.

    Raises ``ValueError`` when not even a top-level value can be recovered (e.g. ``"abc"`` or a
    lone ``-``).
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("empty input")
    try:
        return _PartialParser(stripped).value()
    except _Partial as exc:
        raise ValueError(str(exc)) from None


def parse_streaming_json(text: str | None) -> Any:
    """Arguments from streamed text: strict, repaired, partial, partial of repaired, else ``{}``.

    Never raises. A recovered ``null`` becomes ``{}`` (Pi's ``result ?? {}``); other non-object
    values are returned as they are (validation then rejects them).
    """
    if not text or not text.strip():
        return {}
    try:
        return parse_json_with_repair(text)
    except ValueError:
        pass
    for candidate in (text, repair_json(text)):
        try:
            value = parse_partial(candidate)
        except (ValueError, RecursionError):
            continue
        return {} if value is None else value
    return {}


def parse_tool_call_arguments(text: str | None) -> tuple[Any, str | None]:
    """The arguments of a *finished* tool call: ``(arguments, None)`` or ``({}, error)``.

    Pi 1.x's ``parseToolCallArguments`` (issue 12): partial parsing is for progress while a call
    streams; once it is finished, only text that parses strictly (after :func:`repair_json`) as a
    JSON object counts. Otherwise ``error`` is the parse error in V8's words (or ``Tool arguments
    must be a JSON object``), a blank line, ``Received arguments:`` and the text as received, so
    the model sees what it sent; the pipeline then answers ``Invalid arguments for tool "NAME":
    {error}`` and the call never runs. Empty or blank text is ``{}`` (a call without arguments).
    """
    if not text or not text.strip():
        return {}, None
    try:
        try:
            parsed = loads_strict(text)
        except ValueError as first:
            repaired = repair_json(text)
            if repaired == text:
                raise _ParseFailure(js_json_error(text, first)) from None
            try:
                parsed = loads_strict(repaired)
            except ValueError as second:
                raise _ParseFailure(js_json_error(repaired, second)) from None
        if not isinstance(parsed, dict):
            raise _ParseFailure("Tool arguments must be a JSON object")
    except _ParseFailure as failure:
        return {}, f"{failure}\n\nReceived arguments:\n{text}"
    return parsed, None


class _ParseFailure(Exception):
    """Why finished arguments are not usable (the message is V8's wording)."""
