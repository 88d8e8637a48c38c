"""Argument coercion and validation with the peer's rules (design.md section 2 step 3, pi-behaviour.md 4.4).

Pi validates a tool call's arguments with TypeBox: ``Value.Convert`` (in place) and then a compiled
check whose errors become the model-facing text. :class:`ArgumentValidator` reproduces both on the
tool's JSON Schema (:func:`pi_lsp.agent.schema.json_schema_of`), then builds the tool's pydantic
model from the coerced value.

Coercion (TypeBox ``Value.Convert``, typebox 1.4):

- ``number``: numeric strings as JS unary ``+`` reads them (``"5"``, ``" 1e3 "``, ``"0x10"``, ``""``
  is 0), ``"true"``/``"false"`` (any case) to 1/0, booleans to 1/0; ``integer`` then truncates;
- ``string``: numbers and booleans to their JS text (``123`` to ``"123"``);
- ``boolean``: ``"true"``/``"false"`` (any case), ``"1"``/``"0"``, ``1``/``0``;
- ``array``: a non-array value is wrapped into a one-item array; items are converted;
- ``object``: declared properties converted (unknown keys kept); a non-object stays as is.

One decided difference (design.md section 7): ``null`` for a declared property of an object means
the property is absent (the peer turns it into ``"null"``, ``0`` or ``false``). For a required
property that gives the ``must have required properties`` error. ``null`` elsewhere (array items,
the whole arguments) follows the peer.

Errors, in TypeBox's order per value: the type (``must be object``: then nothing else for that
value); for objects ``required`` (one error naming every missing property, at the first one's path),
unknown keys of a closed object (``schema is false`` per key, then ``must not have additional
properties`` at the object), declared properties in schema order; for arrays each item. Paths are
dotted (``edits.0.oldText``), ``root`` for the arguments themselves.

Cost is linear in the size of the arguments; the schema is compiled once per model.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ValidationError

from pi_lsp.agent.js_values import (
    MAX_SAFE_INTEGER,
    js_json_stringify,
    js_number_to_string,
    js_string_to_number,
    to_js_double,
)
from pi_lsp.agent.schema import json_schema_of
from pi_lsp.agent.tool import ToolError

_BIGINT_TEXT = re.compile(r"-?(0|[1-9][0-9]*)n")  # TypeBox reads "12n" as a BigInt


@dataclass
class _Node:
    """One compiled schema node (only the keywords Pi's tool schemas use)."""

    type: str | None = None
    properties: dict[str, "_Node"] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    closed: bool = False  # additionalProperties: false
    extra: "_Node | None" = None  # additionalProperties: {schema}
    items: "_Node | None" = None


def _compile(schema: Any) -> _Node:
    if not isinstance(schema, dict):
        return _Node()
    kind = schema.get("type")
    node = _Node(type=kind if isinstance(kind, str) else None)
    for name, sub in (schema.get("properties") or {}).items():
        node.properties[name] = _compile(sub)
    node.required = tuple(schema.get("required") or ())
    extra = schema.get("additionalProperties", True)
    node.closed = extra is False
    node.extra = _compile(extra) if isinstance(extra, dict) and extra else None
    if isinstance(schema.get("items"), dict):
        node.items = _compile(schema["items"])
    return node


# ---------------------------------------------------------------- coercion (Value.Convert)


def _to_number(value: Any) -> Any:
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, (int, float)):
        return value
    if value is None:
        return 0
    if isinstance(value, str):
        number = js_string_to_number(value)
        if number is not None and math.isfinite(number):
            return number
        lower = value.lower()
        if lower in ("true", "false"):
            return 1 if lower == "true" else 0
        if _BIGINT_TEXT.fullmatch(value):
            digits = int(value[:-1])
            if abs(digits) <= MAX_SAFE_INTEGER:
                return digits
    return value


def _to_integer(value: Any) -> Any:
    number = _to_number(value)
    if isinstance(number, float) and math.isfinite(number):
        return int(number)
    return number


def _to_string(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number_to_string(value)
    if value is None:
        return "null"
    return value


def _to_boolean(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return {0: False, 1: True}[value] if value in (0, 1) else value
    if value is None:
        return False
    if isinstance(value, str):
        lower = value.lower()
        if lower == "true" or value == "1":
            return True
        if lower == "false" or value == "0":
            return False
    return value


_SCALARS = {"number": _to_number, "integer": _to_integer, "string": _to_string, "boolean": _to_boolean}


def _convert(node: _Node, value: Any) -> Any:
    """A converted copy of ``value`` (containers are new; the input is never changed)."""
    kind = node.type
    if kind == "object":
        if not isinstance(value, dict):
            return value
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = node.properties.get(key)
            if sub is not None:
                if item is None:
                    continue  # null means absent (design.md section 7)
                out[key] = _convert(sub, item)
            elif node.extra is not None:
                out[key] = _convert(node.extra, item)
            else:
                out[key] = item
        return out
    if kind == "array":
        items = value if isinstance(value, list) else [value]
        if node.items is None:
            return list(items)
        return [_convert(node.items, item) for item in items]
    scalar = _SCALARS.get(kind or "")
    return scalar(value) if scalar is not None else value


# ---------------------------------------------------------------- check (TypeBox Errors)


def _type_ok(kind: str, value: Any) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "number":
        return is_number and math.isfinite(to_js_double(value))
    if kind == "integer":
        return is_number and math.isfinite(to_js_double(value)) and float(value).is_integer()
    return True


def _encode(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _check(node: _Node, value: Any, path: str, errors: list[tuple[str, str]]) -> None:
    if node.type is not None and not _type_ok(node.type, value):
        errors.append((path or "root", f"must be {node.type}"))
        return
    if isinstance(value, dict):
        missing = [name for name in node.required if name not in value]
        if missing:
            errors.append((_join(path, missing[0]), "must have required properties " + ", ".join(missing)))
        if node.closed or node.extra is not None:
            extras = [key for key in value if key not in node.properties]
            if node.closed and extras:
                for key in extras:
                    errors.append((_join(path, _encode(key)), "schema is false"))
                errors.append((path or "root", "must not have additional properties"))
            elif node.extra is not None:
                for key in extras:
                    _check(node.extra, value[key], _join(path, _encode(key)), errors)
        for name, sub in node.properties.items():
            if name in value:
                _check(sub, value[name], _join(path, _encode(name)), errors)
    elif isinstance(value, list) and node.items is not None:
        for index, item in enumerate(value):
            _check(node.items, item, _join(path, str(index)), errors)


# ---------------------------------------------------------------- the common case, at once

_NUMBER = "number"


def _flat_scalars(node: _Node) -> dict[str, Any] | None:
    """For an open object whose properties are all strings, numbers or booleans (read, bash,
    grep ...): property name -> ``str``, ``bool`` or :data:`_NUMBER`; ``None`` for any other schema."""
    if node.type != "object" or node.closed or node.extra is not None:
        return None
    kinds: dict[str, Any] = {}
    for name, sub in node.properties.items():
        if sub.type == "string":
            kinds[name] = str
        elif sub.type == "boolean":
            kinds[name] = bool
        elif sub.type == "number":
            kinds[name] = _NUMBER
        else:
            return None
    return kinds


def _already_valid(required: tuple[str, ...], kinds: dict[str, Any], raw: Any) -> bool:
    """True when ``raw`` is a dict that conversion would leave equal and the check would pass:
    every required property present, every declared one of exactly its JSON type (a finite
    float, or an int within JS's safe range, for a number; never ``null``, which conversion
    drops); undeclared keys are kept as they are by both (the object is open). Anything else
    takes the full conversion, so its errors and coercions stay TypeBox's (issue 21)."""
    if type(raw) is not dict:
        return False
    for name in required:
        if name not in raw:
            return False
    for key, value in raw.items():
        kind = kinds.get(key)
        if kind is None:
            continue
        if kind is _NUMBER:
            if type(value) is float:
                if not math.isfinite(value):
                    return False
            elif type(value) is not int or not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
                return False
        elif type(value) is not kind:
            return False
    return True


# ---------------------------------------------------------------- the validator


def format_validation_error(tool_name: str, errors: list[tuple[str, str]], received: Any) -> str:
    """Pi's failure text: header, ``  - {path}: {message}`` lines, blank line, received arguments.

    ``received`` is printed as ``JSON.stringify(received, null, 2)``.
    """
    lines = "\n".join(f"  - {path}: {message}" for path, message in errors) or "Unknown validation error"
    try:
        shown = js_json_stringify(received)
    except RecursionError:
        shown = "[arguments nested too deeply to print]"
    return f'Validation failed for tool "{tool_name}":\n{lines}\n\nReceived arguments:\n{shown}'


class ArgumentValidator:
    """Coerce and validate raw arguments for one args model; build the model instance.

    Compile once (:func:`validator_for` caches per model) and call :meth:`validate` per tool call.
    """

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model
        model.model_rebuild()  # a defer_build model: its validator exists from here on
        self._validate_python = model.__pydantic_validator__.validate_python
        """``model.model_validate`` without its Python frame (one call per tool call, issue 21)."""
        self.schema = json_schema_of(model)
        self._root = _compile(self.schema)
        self._flat = _flat_scalars(self._root)

    def coerce(self, raw: Any) -> tuple[Any, list[tuple[str, str]]]:
        """The converted value and its errors as ``(dotted path, TypeBox message)`` pairs.

        The value is ``raw`` itself when conversion would change nothing (never change it)."""
        if self._flat is not None and _already_valid(self._root.required, self._flat, raw):
            return raw, []  # what conversion and the check would give: an equal dict, no errors
        converted = _convert(self._root, raw)
        errors: list[tuple[str, str]] = []
        _check(self._root, converted, "", errors)
        return converted, errors

    def validate(self, tool_name: str, raw: Any) -> BaseModel:
        """The args model instance for ``raw`` (post-``prepare_arguments`` arguments).

        Raises :class:`ToolError` with Pi's ``Validation failed for tool "{name}": ...`` text, the
        received arguments being ``raw`` before coercion. Pydantic constraints beyond the JSON Schema
        (validators, ranges) are reported in the same format.
        """
        try:
            converted, errors = self.coerce(raw)
        except RecursionError:
            converted, errors = raw, [("root", "is nested too deeply")]
        if errors:
            raise ToolError(format_validation_error(tool_name, errors, raw))
        try:
            return self._validate_python(converted)  # type: ignore[no-any-return]
        except ValidationError as exc:
            found = [
                (".".join(str(part) for part in err["loc"]) or "root", str(err["msg"]))
                for err in exc.errors(include_url=False)
            ]
            raise ToolError(format_validation_error(tool_name, found, raw)) from None


@lru_cache(maxsize=None)
def validator_for(model: type[BaseModel]) -> ArgumentValidator:
    """The cached :class:`ArgumentValidator` of ``model`` (compiled on first use)."""
    return ArgumentValidator(model)
