"""Argument recovery from streamed JSON text (pi-ai ``parseStreamingJson`` behaviour)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pi_lsp.llm.partial_json import parse_json_with_repair, parse_streaming_json, repair_json

# expected values checked against pi-ai 0.73.1's parseStreamingJson run under node
CASES = [
    ("", {}),
    ("   ", {}),
    ('{"a":1}', {"a": 1}),
    ('{"a":"b', {"a": "b"}),
    ('{"a":"b\\', {"a": "b"}),
    ('{"a":"b\\u00', {"a": "b"}),
    ('{"a": 1, "b', {"a": 1}),
    ('{"a": 1, "b":', {"a": 1}),
    ('{"a": 1, "b": tr', {"a": 1, "b": True}),
    ('{"a": [1, 2, "x', {"a": [1, 2, "x"]}),
    ('{"p":"a\nb"}', {"p": "a\nb"}),
    ('{"p":"\\d+"}', {"p": "\\d+"}),
    ('{"p":"\\d+', {"p": ""}),
    ("[1,2", [1, 2]),
    ("abc", {}),
    ("-", {}),
    ("null", None),
    ('{"a":{"b":{"c":"d', {"a": {"b": {"c": "d"}}}),
    ('{"a":"x"} trailing', {"a": "x"}),
    ('{"a" 1}', {}),
    ('{"k":"v","e":[{"x":1},{"y":', {"k": "v", "e": [{"x": 1}, {}]}),
    ('{"a": nul', {"a": None}),
    ('{"a": "\\"', {"a": '"'}),
    ('{"a": 123abc}', {}),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_matches_pi(text: str, expected: object) -> None:
    assert parse_streaming_json(text) == expected


def test_repair_escapes_control_characters_and_stray_backslashes() -> None:
    assert repair_json('{"a": "x\ty\\q", "b": 1}') == '{"a": "x\\ty\\\\q", "b": 1}'
    assert repair_json('{"ok": "\\u00e9\\n"}') == '{"ok": "\\u00e9\\n"}'
    assert repair_json('{"c": "\x01"}') == '{"c": "\\u0001"}'
    assert parse_json_with_repair('{"path": "C:\\new\\dir"}') == {"path": "C:\new\\dir"}


def test_nan_is_not_json() -> None:
    with pytest.raises(ValueError):
        parse_json_with_repair('{"a": NaN}')


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


@settings(deadline=None)
@given(st.dictionaries(st.text(max_size=6), json_values, max_size=4))
def test_complete_json_round_trips(value: dict) -> None:
    assert parse_streaming_json(json.dumps(value)) == value


@settings(deadline=None)
@given(st.dictionaries(st.text(max_size=6), json_values, max_size=4), st.data())
def test_every_prefix_parses_without_raising(value: dict, data: st.DataObject) -> None:
    text = json.dumps(value, ensure_ascii=False)
    cut = data.draw(st.integers(min_value=0, max_value=len(text)))
    result = parse_streaming_json(text[:cut])
    if cut > 0:
        assert isinstance(result, dict)
        assert set(result) <= set(value)
