"""pi.approvals rules, the defaults, workspace confinement and protected paths, on real files."""

from __future__ import annotations

import os

import pytest

from pi_lsp.policy.protected_paths import ProtectedPaths
from pi_lsp.policy.rules import parse_rules
from pi_lsp.tools import TOOL_NAMES
from tests.policy.policy_support import Workspace


def test_defaults_inside_and_outside_the_workspace(ws: Workspace) -> None:
    for tool in ("read", "grep", "find", "ls", "edit", "write"):
        assert ws.decide(tool, path="a.txt").action == "allow", tool
        outside = ws.decide(tool, path=str(ws.outside / "secret.txt"))
        assert outside.action == "ask" and "outside the workspace" in outside.reason, tool
    for tool in ("grep", "find", "ls"):
        assert ws.decide(tool).action == "allow"  # no path: the working directory
    assert ws.decide("ls", path="..").action == "ask"


def test_multi_root_and_the_session_temp_folder_are_inside(ws: Workspace) -> None:
    assert ws.decide("edit", path=str(ws.ws2 / "new.py")).action == "allow"
    assert ws.decide("read", path=str(ws.tmp / "bash-1.log")).action == "allow"
    assert ws.decide("write", path="../ws2/x").action == "allow"


def test_dot_dot_and_symlink_escapes_are_outside(ws: Workspace) -> None:
    os.symlink(ws.outside, ws.ws / "out")
    os.symlink(ws.outside / "secret.txt", ws.ws / "secret-link.txt")
    assert ws.decide("read", path="src/../../outside/secret.txt").action == "ask"
    assert ws.decide("read", path="out/secret.txt").action == "ask"
    assert ws.decide("write", path="out/new.txt").action == "ask"  # not there yet: parent resolved
    assert ws.decide("edit", path="secret-link.txt").action == "ask"
    assert ws.decide("read", path=f"file://{ws.ws}/a.txt").action == "allow"


@pytest.mark.parametrize(
    "path",
    [".env", ".env.local", "src/../.env", ".git/config", ".git", "sub/.git/hooks/pre-commit",
     "key.pem", "deploy.key", "id_rsa", "id_ed25519.pub", "id_ecdsa", "home/.ssh/authorized_keys"],
)
def test_protected_paths_are_refused_for_edit_and_write_whatever_the_rules(ws: Workspace, path: str) -> None:
    allow_all = [{"tool": "*", "action": "allow"}, {"tool": "edit", "path": "**", "action": "allow"}]
    for tool in ("edit", "write"):
        decision = ws.decide(tool, rules=allow_all, path=path)
        assert (decision.action, decision.source) == ("deny", "protected"), (tool, path)
        assert "protected path" in decision.reason


def test_reading_a_protected_path_asks_even_when_a_rule_allows_it(ws: Workspace) -> None:
    allow = [{"tool": "read", "action": "allow"}]
    decision = ws.decide("read", rules=allow, path=".env")
    assert (decision.action, decision.source) == ("ask", "protected")
    assert "content would go to the model" in decision.reason
    assert ws.decide("read", rules=[{"tool": "read", "path": ".env", "action": "deny"}], path=".env").action == "deny"
    assert ws.decide("grep", path="key.pem").action == "ask"
    assert ws.decide("ls", path=".git").action == "allow"  # names only


def test_env_examples_are_not_protected(ws: Workspace) -> None:
    for name in (".env.example", ".env.sample", ".env.template"):
        assert ws.decide("write", path=name).action == "allow", name


def test_symlinks_to_protected_files_are_protected(ws: Workspace) -> None:
    os.symlink(ws.ws / ".env", ws.ws / "notes.txt")
    (ws.outside / ".ssh").mkdir()
    os.symlink(ws.outside / ".ssh", ws.ws / "keys")
    assert ws.decide("write", path="notes.txt").action == "deny"
    assert ws.decide("edit", path="keys/config").action == "deny"
    assert ws.decide("read", path="notes.txt").action == "ask"


def test_the_configurable_extra_list(ws: Workspace) -> None:
    protected = ["secrets/**", "*.sqlite", "/etc/**"]
    assert ws.decide("write", protected=protected, path="secrets/api.json").action == "deny"
    assert ws.decide("write", protected=protected, path="src/db.sqlite").action == "deny"
    assert ws.decide("write", protected=protected, path="/etc/hosts").action == "deny"
    assert ws.decide("write", protected=protected, path="src/secrets/api.json").action == "allow"
    guards, problems = ProtectedPaths.from_settings(["ok/**", "bad[", 7, ""])
    assert [g.pattern for g in guards.extra] == ["ok/**"]
    assert len(problems) == 3 and "bad[" in problems[0]


def test_pattern_rules_come_before_per_tool_rules_in_their_order(ws: Workspace) -> None:
    rules = [
        {"tool": "bash", "action": "deny"},
        {"tool": "bash", "command": "^npm test$", "action": "allow"},
        {"tool": "bash", "command": "^npm", "action": "ask"},
        {"tool": "bash", "command": "test", "action": "deny"},
    ]
    assert ws.bash("npm test", rules=rules).action == "allow"
    assert ws.bash("npm run build", rules=rules).action == "ask"
    assert ws.bash("make test", rules=rules).action == "deny"
    decision = ws.bash("ls", rules=rules)  # the per-tool rule beats the read-only default
    assert (decision.action, decision.source) == ("deny", "rule")
    assert "pi.approvals.rules[0]" in decision.reason


def test_path_rules_and_the_star_tool(ws: Workspace) -> None:
    rules = [
        {"tool": "edit", "path": "src/**", "action": "ask"},
        {"tool": "*", "path": f"{ws.outside}/**", "action": "deny"},
        {"tool": "write", "path": "*.md", "action": "deny"},
        {"tool": "*", "action": "allow"},
    ]
    assert ws.decide("edit", rules=rules, path="src/b.py").action == "ask"
    assert ws.decide("edit", rules=rules, path="a.txt").action == "allow"
    assert ws.decide("write", rules=rules, path="docs/readme.md").action == "deny"
    assert ws.decide("read", rules=rules, path=str(ws.outside / "secret.txt")).action == "deny"
    assert ws.decide("bash", rules=rules, command="rm -rf build").action == "allow"
    assert ws.decide("read", rules=rules, path="/etc/hostname").action == "allow"


@pytest.mark.parametrize(
    ("rules", "needle"),
    [
        ("allow", "must be a list"),
        ([["bash", "allow"]], "must be an object"),
        ([{"tool": "bash", "action": "allow", "comand": "^ls"}], "unknown key 'comand'"),
        ([{"tool": "bash", "action": "yes"}], "'action' must be one of"),
        ([{"action": "allow"}], "'tool' must be"),
        ([{"tool": "delete_everything", "action": "allow"}], "no tool is named 'delete_everything'"),
        ([{"tool": "bash", "command": "(unclosed", "action": "allow"}], "not a valid regular expression"),
        ([{"tool": "bash", "command": 5, "action": "allow"}], "must be a regular expression string"),
        ([{"tool": "edit", "command": "x", "action": "allow"}], "bash tool only"),
        ([{"tool": "bash", "path": "x", "action": "allow"}], "does not apply to the bash tool"),
        ([{"tool": "edit", "path": "src/[", "action": "allow"}], "not a valid glob"),
        ([{"tool": "bash", "command": "x", "path": "y", "action": "allow"}], "not both"),
    ],
)
def test_malformed_rules_are_reported_and_the_defaults_used(ws: object, rules: object, needle: str) -> None:
    good = {"tool": "bash", "action": "allow"}
    parsed, problems = parse_rules([good, *rules] if isinstance(rules, list) else rules, TOOL_NAMES)
    assert parsed == []  # never a partial list, never "allow all"
    assert any(needle in problem for problem in problems), problems
    assert problems[-1].endswith("using the default rules")


def test_no_rules_is_no_problem() -> None:
    assert parse_rules(None, TOOL_NAMES) == ([], [])
    assert parse_rules([], TOOL_NAMES) == ([], [])


def test_a_path_with_a_nul_byte_is_judged_without_raising(ws: Workspace) -> None:
    from types import SimpleNamespace

    from pi_lsp.policy.call_scope import call_scope

    for tool, path in (("read", "a\x00b"), ("write", "../outside/x\x00")):
        scope = call_scope(tool, SimpleNamespace(path=path), ws.ws)  # judged by where it points
        assert scope is not None and str(scope.path).endswith(path.lstrip("./").split("/")[-1])
    assert ws.decide("write", path="../outside/x\x00").action != "allow"
    assert ws.bash("cat a\x00b").action == "ask"


@pytest.mark.parametrize("path", ["a.txt", "src/b.py", ".", "..", "../outside/secret.txt", "/etc/hosts", "src/../a.txt"])
def test_the_shown_path_is_the_tools_display_path(ws: Workspace, path: str) -> None:
    from types import SimpleNamespace

    from pi_lsp.policy.call_scope import call_scope
    from pi_lsp.tools.file_io.paths import display_path, resolve_to_cwd

    scope = call_scope("edit", SimpleNamespace(path=path), ws.ws)
    assert scope is not None and scope.shown == display_path(resolve_to_cwd(path, ws.ws), ws.ws)
