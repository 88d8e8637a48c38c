"""The option parser of the bash judge (issue 13): values are read as the commands read them, so
an option value of ``--`` does not end the options, glued values are values, and anything not
in the allowlist is refused with its name."""

from __future__ import annotations

import os

import pytest

from pi_lsp.policy.command_args import ArgsRefused, parse_args
from pi_lsp.policy.command_table import READ_ONLY_COMMANDS, find_values
from pi_lsp.policy.protected_paths import ProtectedPaths, git_repository_part
from tests.policy.policy_support import Workspace


def values(name: str, *args: str, permute: bool = True) -> list[tuple[str, str, str]]:
    return parse_args(READ_ONLY_COMMANDS[name], list(args), permute=permute).values


def refused(name: str, *args: str) -> str:
    with pytest.raises(ArgsRefused) as info:
        parse_args(READ_ONLY_COMMANDS[name], list(args))
    return str(info.value)


def test_an_option_value_of_double_dash_is_a_value_and_options_after_it_are_judged() -> None:
    assert values("grep", "-e", "--", "a.txt") == [("text", "--", "-e"), ("read", "a.txt", "operand")]
    assert "`rg --pre` runs a program" in refused("rg", "-e", "--", "--pre", "./x", "y")
    assert "`sort -o` writes a file" in refused("sort", "-k", "--", "-o", "out", "a.txt")
    assert "writes a file" in refused("sort", "-t", "--", "--output=x")


def test_double_dash_ends_the_options() -> None:
    assert values("cat", "--", "-n", "--pre") == [("read", "-n", "operand"), ("read", "--pre", "operand")]
    assert values("grep", "-n", "--", "-e", "f") == [("text", "-e", "pattern"), ("read", "f", "operand")]
    assert values("grep", "-e", "x", "--", "-f") == [("text", "x", "-e"), ("read", "-f", "operand")]


def test_glued_short_values_and_long_equals_values() -> None:
    assert values("grep", "-f.env", "a.txt") == [("read", ".env", "-f"), ("read", "a.txt", "operand")]
    assert values("grep", "-nif.env") == [("read", ".env", "-f")]
    assert values("grep", "--file=.env") == [("read", ".env", "--file")]
    assert values("grep", "--file", ".env") == [("read", ".env", "--file")]
    assert values("head", "-n5", "a") == [("read", "a", "operand")]
    assert "expects a number" in refused("head", "-n", "x")


def test_abbreviated_long_options_resolve_or_are_refused() -> None:
    assert values("grep", "--exclude-d=x", "p") == [("text", "x", "--exclude-dir"), ("text", "p", "pattern")]
    assert "ambiguous" in refused("grep", "--fil=x")  # --file, --files-with-matches, ...
    assert "ambiguous" in refused("grep", "--co", "x")  # --count, --context, --color, --colour
    assert "writes a file" in refused("sort", "--out=x")
    assert "not an option known to be safe" in refused("wc", "--files0-from=.env")


def test_optional_values_only_after_equals() -> None:
    assert values("grep", "--color", "pat", "f") == [("text", "pat", "pattern"), ("read", "f", "operand")]
    assert values("grep", "--color=never", "pat") == [("text", "never", "--color"), ("text", "pat", "pattern")]


def test_options_after_operands_count_unless_posixly_correct() -> None:
    assert "writes a file" in refused("sort", "a.txt", "-o", "b")
    assert values("sort", "a.txt", "-o", "b", permute=False) == [
        ("read", "a.txt", "operand"), ("read", "-o", "operand"), ("read", "b", "operand")
    ]


def test_recursion_turns_operands_into_trees_and_defaults_to_the_working_directory() -> None:
    assert values("grep", "-r", "x") == [("text", "x", "pattern"), ("tree", ".", "operand")]
    assert values("grep", "x") == [("text", "x", "pattern")]  # standard input
    assert values("rg", "x") == [("text", "x", "pattern"), ("tree", ".", "operand")]
    assert values("rg", "--files", "src") == [("tree", "src", "operand")]


def test_find_takes_only_known_primaries() -> None:
    assert find_values(["src", "-name", "*.py", "-newer", "a.txt"]).values == [
        ("name", "src", "operand"), ("name", "a.txt", "-newer")
    ]
    assert find_values([]).values == [("name", ".", "operand")]
    for primary in ("-delete", "-exec", "-fprint", "-files0-from", "-L", "-fls", "-ok"):
        with pytest.raises(ArgsRefused):
            find_values([".", primary, "x"])


@pytest.mark.parametrize(
    "name",
    [".env", ".env.local", "key.pem", "a.key", "id_rsa", "id_ed25519.pub", ".git", ".ssh", "x.txt", ".env.example", "pem"],
)
def test_the_fast_name_check_never_misses_a_protected_name(ws: Workspace, name: str) -> None:
    guards = ProtectedPaths()
    path = ws.ws / "sub" / name
    if guards.match(path, ws.scope, os.fspath(path)) is not None:
        assert guards.may_protect_name(name)
    extra, _ = ProtectedPaths.from_settings(["*.sqlite"])
    assert extra.may_protect_name("db.sqlite")


def test_git_repository_files_beside_a_head_are_protected(ws: Workspace) -> None:
    assert git_repository_part(os.fspath(ws.ws / "HEAD")) is not None
    assert git_repository_part(os.fspath(ws.ws / "deep" / "er" / "HEAD")) is not None
    assert git_repository_part(os.fspath(ws.ws / "objects" / "x")) is None  # no HEAD beside it
    (ws.ws / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    for part in ("config", "objects/ab/cd", "refs/heads/main", "hooks/pre-commit", "commondir", "packed-refs"):
        assert git_repository_part(os.fspath(ws.ws / part)) is not None, part
    assert git_repository_part(os.fspath(ws.ws / "src" / "config")) is None
    assert ws.decide("write", path="config").action == "deny"
    assert ws.decide("edit", path="src/config").action == "allow"
