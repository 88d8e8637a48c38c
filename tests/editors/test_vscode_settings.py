"""Every server setting has a VS Code setting: package.json's ``contributes.configuration`` and the
extension's ``SPECS`` (which forwards them) against the server's own model
(:func:`pi_lsp.daemon.setting_paths.setting_paths`), with the same defaults, choices and bounds.

No node needed: the manifest is JSON and the two lists are read from settingsModel.ts's source
(comments stripped). Neovim and Emacs pass the user's ``settings`` through as given, so they need no
such list."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import BaseModel

from pi_lsp.daemon.setting_paths import sections, setting_paths
from pi_lsp.daemon.settings import Settings, parse_settings

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"

# VS Code settings that stand for a whole server section, and why
OBJECT_SETTINGS = {"approvals": "its rules are a list of objects, edited in settings.json"}
OWN_SETTINGS = {"server.path", "server.args"}  # the extension's, never sent


def _manifest() -> dict[str, Any]:
    return json.loads((EXTENSION / "package.json").read_text(encoding="utf-8"))


def _properties() -> dict[str, dict[str, Any]]:
    found = _manifest()["contributes"]["configuration"]["properties"]
    assert all(key.startswith("pi.") for key in found), list(found)
    return {key.removeprefix("pi."): schema for key, schema in found.items()}


def _source() -> str:
    text = (EXTENSION / "src" / "settingsModel.ts").read_text(encoding="utf-8")
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"(?m)^\s*//.*$", "", text)


def _specs() -> list[str]:
    body = re.search(r"export const SPECS: Spec\[\] = \[(.*?)\n\];", _source(), re.S)
    assert body, "SPECS not found in settingsModel.ts"
    return re.findall(r"\{\s*key:\s*'([^']+)'", body.group(1))


def _user_scope_keys() -> list[str]:
    body = re.search(r"export const USER_SCOPE_KEYS = \[(.*?)\];", _source(), re.S)
    assert body, "USER_SCOPE_KEYS not found in settingsModel.ts"
    return re.findall(r"'([^']+)'", body.group(1))


def _expected_keys() -> list[str]:
    keys: list[str] = []
    for path in setting_paths(Settings):
        head = path.split(".")[0]
        key = head if head in OBJECT_SETTINGS else path
        if key not in keys:
            keys.append(key)
    return keys


def _field(path: str) -> Any:
    model: type[BaseModel] = Settings
    *heads, leaf = path.split(".")
    for head in heads:
        model = sections(model)[head]
    return next(info for name, info in model.model_fields.items() if (info.alias or name) == leaf)


def _nested(path: str, value: Any) -> dict[str, Any]:
    *heads, leaf = path.split(".")
    raw: dict[str, Any] = {leaf: value}
    for head in reversed(heads):
        raw = {head: raw}
    return raw


def test_every_server_setting_is_a_vscode_setting_and_is_forwarded() -> None:
    expected = _expected_keys()
    assert len(expected) > 30  # the model was read, not an empty list
    offered = [key for key in _properties() if key not in OWN_SETTINGS]
    assert sorted(set(expected) - set(offered)) == [], "server settings VS Code does not offer"
    assert sorted(set(offered) - set(expected)) == [], "VS Code settings the server does not know"
    specs = _specs()
    assert len(specs) == len(set(specs)), specs
    assert sorted(set(expected) - set(specs)) == [], "server settings settingsModel.ts does not send"
    assert sorted(set(specs) - set(expected)) == [], "settings settingsModel.ts sends that the server does not know"


def test_defaults_choices_and_bounds_are_the_servers() -> None:
    properties = _properties()
    for key in _expected_keys():
        schema = properties[key]
        default = schema["default"]
        if key in OBJECT_SETTINGS:
            continue
        info = _field(key)
        args = typing.get_args(info.annotation)
        nullable = type(None) in args
        kinds = set(schema["type"]) if isinstance(schema["type"], list) else {schema["type"]}
        if info.default is None and default == "":
            assert kinds == {"string"}, key  # VS Code strings cannot be null: empty means unset
        else:
            settings, problems = parse_settings(_nested(key, default))
            assert problems == [] and settings == Settings(), f"pi.{key}: default {default!r} is not the server's"
            assert ("null" in kinds) == nullable, f"pi.{key}: null allowed in one and not the other"
        base = next((a for a in args if a is not type(None)), None) if nullable else info.annotation
        if typing.get_origin(base) is typing.Literal:
            allowed = [*typing.get_args(base), *([None] if nullable else [])]
            assert sorted(schema["enum"], key=str) == sorted(allowed, key=str), key
        json_type = {int: "integer", float: "number", bool: "boolean", str: "string"}.get(base, "array")
        if typing.get_origin(base) is typing.Literal:
            json_type = "string"
        assert json_type in kinds, f"pi.{key}: {schema['type']} for {info.annotation}"
        for bound in info.metadata:
            if isinstance(bound, annotated_types.Gt):
                assert schema.get("exclusiveMinimum") == bound.gt, key
            if isinstance(bound, annotated_types.Ge):
                assert schema.get("minimum") == bound.ge, key
        assert schema.get("description") or schema.get("markdownDescription"), key


def test_an_object_setting_describes_the_servers_section() -> None:
    properties = _properties()
    for key in OBJECT_SETTINGS:
        schema = properties[key]
        fields = setting_paths(sections(Settings)[key])
        assert sorted(schema["properties"]) == sorted(fields), key
        assert schema["additionalProperties"] is False
        for field in fields:
            given = schema["properties"][field]
            settings, problems = parse_settings(_nested(f"{key}.{field}", given["default"]))
            assert problems == [] and settings == Settings(), f"pi.{key}.{field}: default is not the server's"


def test_user_scope_settings_are_user_scope_everywhere() -> None:
    properties = _properties()
    user_scope = _user_scope_keys()
    for key in ("provider", "baseUrl", "apiKeyEnv", "approvals", "bash.sandbox", "externalSocket"):
        assert key in user_scope, key  # each can redirect prompts, leak a key or widen rights
    scoped = {key for key, schema in properties.items() if schema.get("scope") in ("application", "machine")}
    assert scoped == set(user_scope)
    restricted = _manifest()["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"]
    assert {f"pi.{key}" for key in user_scope} <= set(restricted)
