"""Tool schemas as models see them: ``json_schema_of`` and the built-in tools against the real peer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from pi_lsp.agent.schema import json_schema_of
from pi_lsp.tools import TOOL_NAMES, create_tools
from pi_lsp.tools.environment import ToolEnvironment
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from tests.peer import run_peer_script


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    old_text: str = Field(alias="oldText", description="old")
    count: int = Field(description="how many")


class Outer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="where")
    items: list[Item] = Field(description="what")
    limit: float | None = Field(default=None, description="cap")
    flag: bool = False
    only: Item | None = None


class Node(BaseModel):
    children: list["Node"] = Field(default_factory=list)


def test_inlined_ordered_and_free_of_pydantic_keys() -> None:
    schema = json_schema_of(Outer)
    item = {
        "type": "object",
        "required": ["oldText", "count"],
        "properties": {
            "oldText": {"type": "string", "description": "old"},
            "count": {"type": "integer", "description": "how many"},
        },
        "additionalProperties": False,
    }
    assert schema == {
        "type": "object",
        "required": ["path", "items"],
        "properties": {
            "path": {"type": "string", "description": "where"},
            "items": {"type": "array", "items": item, "description": "what"},
            "limit": {"type": "number", "description": "cap"},
            "flag": {"type": "boolean"},
            "only": item,
        },
        "additionalProperties": False,
    }
    assert list(schema) == ["type", "required", "properties", "additionalProperties"]
    assert list(schema["properties"]["items"]) == ["type", "items", "description"]
    text = json.dumps(schema)
    for banned in ("$ref", "$defs", "title", "default", "anyOf", "null"):
        assert banned not in text


def test_open_model_without_required_fields() -> None:
    class Open(BaseModel):
        path: str | None = Field(default=None, description="dir")

    assert json_schema_of(Open) == {"type": "object", "properties": {"path": {"type": "string", "description": "dir"}}}


def test_each_call_returns_a_fresh_copy() -> None:
    first = json_schema_of(Outer)
    first["properties"]["path"]["description"] = "changed"
    assert json_schema_of(Outer)["properties"]["path"]["description"] == "where"


def test_recursive_models_are_refused() -> None:
    with pytest.raises(ValueError, match="recursive"):
        json_schema_of(Node)


def our_tools() -> dict[str, Any]:
    env = ToolEnvironment(cwd=Path("."), files=LocalFileAccess(), temp_dir=Path("."))
    return {tool.name: tool for tool in create_tools(env)}


@pytest.fixture(scope="module")
def peer_defs(peer: Path) -> dict[str, dict[str, Any]]:
    """The peer's tool definitions, regenerated from its packages at test time."""
    [defs] = run_peer_script(peer, "peer_defs.mjs")
    return {d["name"]: d for d in defs}


@pytest.mark.peer
@pytest.mark.parametrize("name", TOOL_NAMES)
def test_builtin_tool_definition_is_the_peers(peer_defs: dict[str, dict[str, Any]], name: str) -> None:
    tools = our_tools()
    if name not in tools:
        pytest.skip(f"tool {name!r} is not implemented yet")
    theirs = peer_defs[name]
    tool = tools[name]
    assert tool.name == theirs["name"] and tool.label == theirs["label"]
    assert tool.description == theirs["description"]
    assert tool.parameters == theirs["parameters"]
    assert json.dumps(tool.parameters) == json.dumps(theirs["parameters"]), "key order differs"
    assert json_schema_of(tool.args_model) == tool.parameters
    assert tool.execution_mode == (theirs["executionMode"] or "parallel")
