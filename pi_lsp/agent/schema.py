"""The JSON Schema of a tool's arguments, shaped as Pi's TypeBox schemas are (design.md section 2).

Models see these schemas, and the peer (`@mariozechner/pi-coding-agent` 0.73.1, its
``tool.parameters``) is the reference, so :func:`json_schema_of` turns pydantic's JSON Schema into
the form TypeBox emits:

- everything inlined: no ``$ref`` / ``$defs``;
- no ``title`` and no ``default``;
- an optional field is simply absent from ``required`` (pydantic's ``anyOf: [X, {type: null}]`` for
  ``X | None`` collapses to ``X``);
- ``required`` is left out when empty (Pi's ``ls`` has none);
- a model's docstring is documentation for developers, not for models: the ``description`` pydantic
  derives from it (on the top-level object and on nested models) is dropped; field descriptions
  (``Field(description=...)``) are kept;
- keys in TypeBox's order: ``type``, ``required``, ``properties``, ``items``, then ``description``,
  then the rest (``additionalProperties: false`` for a model with ``extra="forbid"``).

Field types map as JSON does: ``str`` to ``string``, ``float`` to ``number`` (use ``float`` for Pi's
``Type.Number``), ``int`` to ``integer``, ``bool`` to ``boolean``, ``list[X]`` to ``array``, a nested
model to an inlined ``object``.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

_DROPPED_KEYS = frozenset({"title", "default", "$defs", "definitions"})
_LEADING_KEYS = ("type", "required", "properties", "items", "description")


def json_schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The inlined JSON Schema of ``model``'s fields, by alias, in Pi's TypeBox shape.

    Returns a fresh dict on every call (callers may keep or change it). Raises ``ValueError`` for a
    model that refers to itself (a recursive schema cannot be inlined).
    """
    return copy.deepcopy(_cached_schema(model))


@lru_cache(maxsize=None)
def _cached_schema(model: type[BaseModel]) -> dict[str, Any]:
    raw = model.model_json_schema(by_alias=True)
    raw.pop("description", None)
    defs = {
        name: {k: v for k, v in target.items() if k != "description"}
        for name, target in raw.get("$defs", {}).items()
    }
    return _normalise(raw, defs, ())


def _normalise(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    """Inline references and drop pydantic-only keys, recursively."""
    if isinstance(node, list):
        return [_normalise(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    node = _collapse_optional(node)
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name in seen:
            raise ValueError(f"recursive model {name!r} cannot be inlined into a tool schema")
        target = dict(defs[name])
        # sibling keys of a $ref (pydantic puts a field's description there) win over the target's
        target.update({k: v for k, v in node.items() if k != "$ref"})
        return _normalise(target, defs, seen + (name,))
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED_KEYS:
            continue
        if key == "properties":
            out[key] = {name: _normalise(sub, defs, seen) for name, sub in value.items()}
        elif key == "required" and not value:
            continue
        else:
            out[key] = _normalise(value, defs, seen)
    return _ordered(out)


def _collapse_optional(node: dict[str, Any]) -> dict[str, Any]:
    """``{anyOf: [X, {type: null}], ...}`` becomes ``{...X, ...}`` (optional means not required)."""
    branches = node.get("anyOf")
    if not isinstance(branches, list):
        return node
    kept = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
    if len(kept) == len(branches):
        return node
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    if len(kept) == 1 and isinstance(kept[0], dict):
        merged = dict(kept[0])
        merged.update(rest)
        return merged
    return {"anyOf": kept, **rest}


def _ordered(node: dict[str, Any]) -> dict[str, Any]:
    """Re-key ``node`` in TypeBox's order (see the module docstring)."""
    out = {key: node[key] for key in _LEADING_KEYS if key in node}
    out.update((key, value) for key, value in node.items() if key not in out)
    return out
