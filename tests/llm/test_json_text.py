"""json_text.loads reads what JSON.parse reads, with the errors Python's json gives (its direct
scan of a bare object, issue 21, included): compared with ``json.loads`` text by text."""

from __future__ import annotations

import json

import pytest

from pi_lsp.llm import json_text
from pi_lsp.llm.json_text import MAX_DEPTH, JsonTextError

TEXTS = [
    "{}",
    '{"toolCall":{"id":"r","name":"read","arguments":{"path":"a.py"}}}',
    '{"a": [1, 2.5, -0, 1e400, "\\u00e9\\ud800", true, null]}',
    ' {"a": 1}',
    '{"a": 1} ',
    '{"a": 1}\n',
    "[1, 2]",
    '"text"',
    "3",
    '{"a": 1}x',
    '{"a": 1}{"b": 2}',
    '{"a": 1',
    '{"a" 1}',
    "{",
    "}",
    "{}}",
    "",
    "   ",
]


def _reject(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _agrees_with_json(text: str | bytes) -> None:
    """json_text.loads(text) is json.loads's value, or raises its error (type and message)."""
    try:
        expected = json.loads(text, parse_constant=_reject)
    except ValueError as exc:
        with pytest.raises(ValueError) as raised:
            json_text.loads(text)
        assert str(raised.value) == str(exc) and type(raised.value) is type(exc)
        return
    assert json_text.loads(text) == expected


@pytest.mark.parametrize("text", TEXTS)
def test_loads_agrees_with_json(text: str) -> None:
    _agrees_with_json(text)
    _agrees_with_json(text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("text", ['{"a": NaN}', '{"a": [Infinity]}', '{"a": -Infinity}'])
def test_non_finite_literals_are_refused(text: str) -> None:
    with pytest.raises(JsonTextError, match="is not JSON"):
        json_text.loads(text)


def test_byte_order_marks_and_encodings() -> None:
    assert json_text.loads(b'\xef\xbb\xbf{"a": 1}') == {"a": 1}
    assert json_text.loads('{"a": "\u00e9"}'.encode("utf-16")) == {"a": "\u00e9"}
    with pytest.raises(json.JSONDecodeError, match="BOM"):
        json_text.loads('\ufeff{"a": 1}')


def test_depth_is_limited_on_the_direct_scan_too() -> None:
    deep = '{"a": ' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1)
    with pytest.raises(JsonTextError, match=f"deeper than {MAX_DEPTH}"):
        json_text.loads(deep)
    fits = '{"a": ' * (MAX_DEPTH - 1) + "1" + "}" * (MAX_DEPTH - 1)
    assert json_text.loads(fits)["a"]["a"]["a"] is not None


@pytest.mark.parametrize(
    "data",
    [b'{"a": 1}', b"{", b"{}", b'{\x00"\x00}\x00', '{"a": "\u00e9"}'.encode("utf-16-le"), '{"a": 1}'.encode("utf-32-le")],
)
def test_bytes_are_decoded_as_json_detects_their_encoding(data: bytes) -> None:
    _agrees_with_json(data)
