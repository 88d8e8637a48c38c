"""Argument coercion and validation against the peer's own validator (pi-ai validateToolArguments).

The peer's schemas are turned into pydantic models here (``model_from_schema``), so the same inputs
go through Pi's TypeBox code and through :class:`ArgumentValidator`; errors (text and order) and
coerced values must agree, except where design.md section 7 decides otherwise (``null`` = absent).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, create_model

from pi_lsp.agent.js_values import js_json_stringify
from pi_lsp.agent.schema import json_schema_of
from pi_lsp.agent.tool import ToolError
from pi_lsp.agent.validation import ArgumentValidator, validator_for
from tests.peer import run_peer_script

_SCALARS: dict[str, type] = {"string": str, "number": float, "integer": int, "boolean": bool}


def model_from_schema(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """A pydantic model whose ``json_schema_of`` should be ``schema`` (objects, arrays, scalars)."""

    def annotation(field_name: str, sub: dict[str, Any]) -> Any:
        kind = sub["type"]
        if kind == "object":
            return model_from_schema(f"{name}_{field_name}", sub)
        if kind == "array":
            return list[annotation(field_name, sub["items"])]  # type: ignore[misc]
        return _SCALARS[kind]

    required = set(schema.get("required", ()))
    fields: dict[str, Any] = {}
    for field_name, sub in schema["properties"].items():
        kind = annotation(field_name, sub)
        extra = {"description": sub["description"]} if "description" in sub else {}
        if field_name in required:
            fields[field_name] = (kind, Field(..., **extra))
        else:
            fields[field_name] = (kind | None, Field(None, **extra))
    closed = schema.get("additionalProperties") is False
    config = ConfigDict(extra="forbid" if closed else "ignore")
    return create_model(name, __config__=config, **fields)


@pytest.fixture(scope="module")
def peer_defs(peer: Path) -> dict[str, dict[str, Any]]:
    [defs] = run_peer_script(peer, "peer_defs.mjs")
    return {d["name"]: d for d in defs}


@pytest.fixture(scope="module")
def models(peer_defs: dict[str, dict[str, Any]]) -> dict[str, type[BaseModel]]:
    return {name: model_from_schema(name, d["parameters"]) for name, d in peer_defs.items()}


def test_schema_round_trips_every_peer_schema(peer_defs, models) -> None:
    for name, model in models.items():
        ours = json_schema_of(model)
        theirs = peer_defs[name]["parameters"]
        assert ours == theirs, name
        # same key order too (models see the serialised text)
        assert json.dumps(ours) == json.dumps(theirs), name


# inputs whose objects hold no null for a declared property (there pi-lsp differs on purpose)
CASES: list[tuple[str, Any]] = [
    ("read", {"path": "a", "offset": "5"}),
    ("read", {}),
    ("read", "hello"),
    ("read", [1, 2]),
    ("read", None),
    ("read", 5),
    ("read", True),
    ("read", {"path": ["a"]}),
    ("read", {"path": {"x": 1}}),
    ("read", {"path": "a", "offset": "abc", "limit": True}),
    ("read", {"offset": "abc", "limit": [1]}),
    ("read", {"limit": [1], "offset": "abc"}),
    ("read", {"path": "a", "offset": ""}),
    ("read", {"path": "a", "offset": " 7 "}),
    ("read", {"path": "a", "offset": "1e3"}),
    ("read", {"path": "a", "offset": "0x10"}),
    ("read", {"path": "a", "offset": "-0x10"}),
    ("read", {"path": "a", "offset": "Infinity"}),
    ("read", {"path": "a", "offset": "TRUE"}),
    ("read", {"path": "a", "offset": "12n"}),
    ("read", {"path": "a", "offset": "1_000"}),
    ("read", {"path": "a", "offset": False}),
    ("read", {"path": "a", "offset": [3]}),
    ("read", {"path": "a", "offset": {}}),
    ("read", {"path": True}),
    ("read", {"path": 1.5}),
    ("read", {"path": 1e21}),
    ("read", {"path": 5.0}),
    ("read", {"path": 1e-7}),
    ("read", {"path": "a", "extra": {"z": 1}, "n": None}),
    ("read", {"path": "é ü \u2028 \x01 \t", "offset": "x"}),
    ("grep", {"pattern": "x", "ignoreCase": "TRUE"}),
    ("grep", {"pattern": "x", "ignoreCase": "1"}),
    ("grep", {"pattern": "x", "ignoreCase": "0"}),
    ("grep", {"pattern": "x", "ignoreCase": 1}),
    ("grep", {"pattern": "x", "ignoreCase": 1.0}),
    ("grep", {"pattern": "x", "ignoreCase": 2}),
    ("grep", {"pattern": "x", "ignoreCase": "yes"}),
    ("grep", {"pattern": "x", "literal": "False", "context": "2", "limit": True}),
    ("grep", {"pattern": "x", "ignoreCase": [True]}),
    ("grep", {"pattern": 5, "path": False, "glob": 1.25, "context": "a", "limit": "b"}),
    ("edit", {"path": "a", "edits": {"oldText": "a", "newText": "b"}}),
    ("edit", {"path": "a", "edits": [{"oldText": "a"}]}),
    ("edit", {"path": "a", "edits": [{"oldText": 1, "newText": 2, "x": 3}]}),
    ("edit", {"path": "a", "edits": [{"oldText": "a", "newText": "b"}], "foo": 1, "bar": 2}),
    ("edit", {"path": "a", "edits": ["x", 5]}),
    ("edit", {"edits": "notjson"}),
    ("edit", {"path": "a", "edits": [None]}),
    ("edit", {"path": "a", "edits": [[{"oldText": "a", "newText": "b"}]]}),
    ("edit", {}),
    ("edit", {"oldText": "a", "newText": "b"}),
    ("edit", {"path": "a", "oldText": "a", "newText": 5}),
    ("edit", {"path": "a", "edits": [{"newText": "b", "a/b": 1, "c~d": 2}, {}], "q.r": 1}),
    ("edit", "str"),
    ("ls", {}),
    ("ls", []),
    ("ls", "x"),
    ("ls", {"path": 0, "limit": "-0"}),
    ("bash", {"command": 123}),
    ("bash", {"command": 123.0}),
    ("bash", {"command": 0.1}),
    ("bash", {"command": 1e300}),
    ("bash", {"command": 12345678901234567890}),
    ("bash", {"command": False, "timeout": "1.5"}),
    ("write", {"path": "p", "content": ["a", "b"]}),
    ("write", {"content": {"a": [1, {"b": None}]}}),
    ("find", {"pattern": "*", "limit": " "}),
]


def _ours(model: type[BaseModel], name: str, raw: Any) -> dict[str, Any]:
    validator = ArgumentValidator(model)
    converted, errors = validator.coerce(raw)
    try:
        validator.validate(name, raw)
    except ToolError as exc:
        assert errors, "pydantic rejected what the schema check accepted"
        return {"ok": False, "error": exc.message}
    assert not errors
    return {"ok": True, "args": converted}


def test_coercion_and_errors_match_the_peer(peer: Path, models) -> None:
    theirs = run_peer_script(
        peer, "peer_validate.mjs", [{"name": n, "arguments": a} for n, a in CASES]
    )
    assert len(theirs) == len(CASES)
    mismatches = []
    for (name, raw), expected in zip(CASES, theirs):
        got = _ours(models[name], name, raw)
        if got != expected:
            mismatches.append(f"{name} {raw!r}\n  peer: {expected}\n  ours: {got}")
    assert not mismatches, "\n".join(mismatches)


def test_null_in_a_declared_property_means_absent(models) -> None:
    validator = ArgumentValidator(models["read"])
    args = validator.validate("read", {"path": "a.txt", "offset": None, "limit": None})
    assert (args.path, args.offset, args.limit) == ("a.txt", None, None)
    with pytest.raises(ToolError) as caught:
        validator.validate("read", {"path": None})
    assert caught.value.message == (
        'Validation failed for tool "read":\n  - path: must have required properties path'
        '\n\nReceived arguments:\n{\n  "path": null\n}'
    )
    # null in an array item is not a missing property: the peer's rule stands
    edit = ArgumentValidator(models["edit"])
    with pytest.raises(ToolError, match=r"edits\.0: must be object"):
        edit.validate("edit", {"path": "a", "edits": [None]})
    with pytest.raises(ToolError, match="must have required properties edits"):
        edit.validate("edit", {"path": "a", "edits": None})


def test_validated_model_holds_coerced_values(models) -> None:
    args = ArgumentValidator(models["edit"]).validate(
        "edit", {"path": 7, "edits": {"oldText": 1, "newText": True}}
    )
    assert args.path == "7"
    assert [(e.oldText, e.newText) for e in args.edits] == [("1", "true")]


def test_received_arguments_are_the_input_not_the_coerced_value(models) -> None:
    raw = {"path": 5, "offset": "x"}
    with pytest.raises(ToolError) as caught:
        ArgumentValidator(models["read"]).validate("read", raw)
    assert caught.value.message.endswith('{\n  "path": 5,\n  "offset": "x"\n}')
    assert raw == {"path": 5, "offset": "x"}, "the caller's arguments were changed"


def test_pydantic_constraints_beyond_the_schema_are_reported_in_pi_format() -> None:
    class Positive(BaseModel):
        n: float = Field(gt=0)

    with pytest.raises(ToolError) as caught:
        ArgumentValidator(Positive).validate("t", {"n": "-1"})
    assert caught.value.message.startswith('Validation failed for tool "t":\n  - n: ')
    assert "greater than 0" in caught.value.message


def test_validator_is_compiled_once_per_model(models) -> None:
    assert validator_for(models["ls"]) is validator_for(models["ls"])


def test_megabytes_of_arguments_validate_in_linear_time(models) -> None:
    validator = ArgumentValidator(models["edit"])
    big = {"path": "a", "edits": [{"oldText": "x" * 100, "newText": "y" * 100}] * 20_000}
    huge_text = {"path": "a", "edits": [{"oldText": "x" * 8_000_000, "newText": "y"}]}
    started = time.perf_counter()
    assert len(validator.validate("edit", big).edits) == 20_000
    assert validator.validate("edit", huge_text).edits[0].oldText == "x" * 8_000_000
    bad = {"path": "a", "edits": [5] * 50_000}
    with pytest.raises(ToolError) as caught:
        validator.validate("edit", bad)
    assert caught.value.message.count("must be object") == 50_000
    assert time.perf_counter() - started < 30  # generous: quadratic work would take minutes


def test_deeply_nested_arguments_give_an_error_not_a_crash(models) -> None:
    nested: Any = "x"
    for _ in range(100_000):
        nested = [nested]
    with pytest.raises(ToolError, match="Validation failed"):
        ArgumentValidator(models["read"]).validate("read", {"path": nested})


def test_numbers_beyond_a_double_are_infinite_as_in_js() -> None:
    class Numbers(BaseModel):
        n: float
        s: str

    validator = ArgumentValidator(Numbers)
    assert validator.validate("t", {"n": 1, "s": 10**400}).s == "Infinity"
    with pytest.raises(ToolError) as caught:
        validator.validate("t", {"n": 10**400, "s": "x"})
    assert caught.value.message == (
        'Validation failed for tool "t":\n  - n: must be number\n\nReceived arguments:\n{\n  "n": null,\n  "s": "x"\n}'
    )


def test_js_json_stringify_matches_json_stringify_shape() -> None:
    assert js_json_stringify({"a": [1.0, 2.5, {}], "b": [], "c": "\u00e9\n"}) == (
        '{\n  "a": [\n    1,\n    2.5,\n    {}\n  ],\n  "b": [],\n  "c": "\u00e9\\n"\n}'
    )
