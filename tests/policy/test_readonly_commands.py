"""bash without asking: only a single simple read-only command from the table, its files inside
the workspace and (for commands that print contents) not protected."""

from __future__ import annotations

import os

import pytest

from pi_lsp.policy.readonly_commands import READ_ONLY_COMMANDS
from pi_lsp.policy.shell_expand import expand_words
from pi_lsp.policy.shell_grammar import NotSimple, parse_simple_command
from tests.policy.policy_support import Workspace

ALLOWED = [
    "ls",
    "ls -la src",
    "pwd",
    "cat a.txt",
    "cat 'a.txt'",
    "head -n 5 src/b.py",
    "wc -l *.txt src/*.py",
    "grep -n x a.txt",
    "rg -n --pretty x src",
    "find . -name '*.py' -type f",
    "find src -newer a.txt",
    "git status",
    "git log --oneline -5",
    "git log --oneline -- src/b.py",
    "ls {a,b}",
    "echo 'a; b | c > d' \"$\\HOME\"".replace("$\\HOME", "x"),
    "echo '$HOME'",
    "ls ../ws2",
    "stat .env",  # metadata only: a protected name is not read
    "du -sh src",
]

ASKED = {
    "ls; rm -rf x": "`;`",
    "ls && rm -rf x": "`&&`",
    "ls || rm x": "`||`",
    "ls & rm x": "`&`",
    "cat a.txt | sh": "`|`",
    "cat a > b": "`>`",
    "cat < a.txt": "`<`",
    "cat <(rm x)": "`<(...)`",
    "echo $(rm x)": "`$(...)`",
    'echo "$(rm x)"': "`$(...)`",
    "echo `rm x`": "backticks",
    'echo "`rm x`"': "backticks",
    "echo $HOME": "`$`",
    "cat a.txt\nrm b": "newline",
    "cat a.txt\rrm b": "newline",
    "find . -{delete,print}": "-delete",
    "(ls)": "subshell",
    "ls # rm": "comment",
    "ls ~root": "outside the workspace",
    "cat 'a.txt": "cannot read",
    'cat "a.txt': "cannot read",
    "cat a.txt\\": "cannot read",
    "find . -delete": "-delete",
    "find -- . -delete": "--",
    "find . -name x -exec rm {} +": "-exec",
    "find . -name x -exec rm ;": "`;`",
    "find . -execdir ls": "-execdir",
    "find . -fprint out": "-fprint",
    "git --output=x log": "global option",
    "git log --output=x": "--output",
    "git log --output x": "--output",
    "git diff --o=x": "`git diff` is not a subcommand judged read-only",
    "git -c core.pager=sh log": "global option",
    "git push": "not a subcommand judged read-only",
    "git": "without a subcommand",
    "git grep -O x": "`git grep`",
    "git diff --ext-diff": "`git diff`",
    "rg --pre cat x": "--pre",
    "rg --pre=./evil x": "--pre",
    "rg -f patterns.txt": "key.pem",
    "sort -uo out a.txt": "-o",
    "sort --output=out a.txt": "--output",
    "tree -o out": "-o",
    "file -C -m magic": "-C",
    "rm -rf x": "not in the table",
    "FOO=1 ls": "`NAME=value`",
    "/bin/ls": "not in the table",
    "env rm x": "not in the table",
    "xargs rm": "not in the table",
    "l? a.txt": "not in the table",
    "": "empty",
    "cat .env": "protected",
    "cat ./src/../.env": "protected",
    "cat .en?": "protected",
    "grep KEY key.pem": "protected",
    "cat ../outside/secret.txt": "outside the workspace",
    "cat /etc/hostname": "outside the workspace",
    "ls /": "outside the workspace",
    "head ~/.bashrc": "outside the workspace",
    "grep --file=/etc/passwd a.txt": "-f",
    "wc --files0-from=/etc/x": "--files0-from",
    "diff .env.example .": "protected path",  # diff FILE DIR reads DIR/FILE: the folder is walked
}


@pytest.mark.parametrize("command", ALLOWED)
def test_simple_read_only_commands_run_without_asking(ws: Workspace, command: str) -> None:
    decision = ws.bash(command)
    assert (decision.action, decision.reason) == ("allow", "a simple read-only command")


@pytest.mark.parametrize("command", list(ASKED), ids=[repr(c) for c in ASKED])
def test_everything_else_is_asked_with_the_reason(ws: Workspace, command: str) -> None:
    decision = ws.bash(command)
    assert decision.action == "ask"
    assert decision.reason.startswith("not a simple read-only command: ")
    assert ASKED[command] in decision.reason


def test_a_symlink_inside_the_workspace_to_a_protected_or_outside_file_is_asked(ws: Workspace) -> None:
    os.symlink(ws.ws / ".env", ws.ws / "notes.txt")
    os.symlink(ws.outside / "secret.txt", ws.ws / "link.txt")
    assert "protected" in ws.bash("cat notes.txt").reason
    assert "outside the workspace" in ws.bash("cat link.txt").reason
    assert ws.bash("ls -l notes.txt").action == "allow"  # a listing shows no content


def test_a_fifo_socket_or_device_named_for_its_contents_is_asked(ws: Workspace) -> None:
    # reading a FIFO blocks until a writer comes: the call would hang until its timeout
    os.mkfifo(ws.ws / "pipe.txt")
    os.symlink(ws.ws / "pipe.txt", ws.ws / "via-link.txt")
    for command in ("cat pipe.txt", "wc -l *.txt", "head via-link.txt", "grep -r x pipe.txt"):
        decision = ws.bash(command)
        assert decision.action == "ask", command
        assert "is a FIFO; reading it could block" in decision.reason, decision.reason
    assert ws.bash("ls -l pipe.txt").action == "allow"  # a listing does not open it
    os.mkfifo(ws.ws / "src" / "pipe")
    assert ws.bash("grep -r x src").action == "allow"  # grep -r and rg skip such entries below the top


def test_a_glob_is_judged_by_what_it_expands_to(ws: Workspace) -> None:
    for index in range(3):
        (ws.ws / f"log{index}.txt").write_text("x", encoding="utf-8")
    assert ws.bash("cat log*.txt").action == "allow"
    assert ws.bash("cat .e*").action == "ask"  # .env and .env.example
    assert "key.pem" in ws.bash("cat *").reason  # the match that is protected
    (ws.ws / "key.pem").unlink()
    assert ws.bash("cat *").action == "allow"  # like bash, * skips hidden names such as .env


def test_the_temp_folder_and_the_second_root_count_as_inside(ws: Workspace) -> None:
    (ws.tmp / "spill.log").write_text("x", encoding="utf-8")
    assert ws.bash(f"tail -n 20 {ws.tmp / 'spill.log'}").action == "allow"
    assert ws.bash(f"cat {ws.ws2}/x").action == "allow"


def test_the_grammar_keeps_words_as_written_and_bash_expands_them(ws: Workspace) -> None:
    command = parse_simple_command("""cat 'b c' "d\\"e" f\\ g  'h'i *.txt '*.md' ~/x {p,q}""")
    assert command.words == ("cat", "'b c'", '"d\\"e"', "f\\ g", "'h'i", "*.txt", "'*.md'", "~/x", "{p,q}")
    fields = expand_words(command.words, ws.ws, timeout_seconds=10)
    assert fields == [["cat"], ["b c"], ['d"e'], ["f g"], ["hi"], ["a.txt"], ["*.md"], [os.path.expanduser("~/x")], ["p", "q"]]
    assert parse_simple_command("ls 2>/dev/null").stderr_to_null
    for bad in ("ls\x00", "   ", "ls 2>/tmp/x", "cat <<EOF", "a=1 ls", "echo $'x'", "[[ -f x ]]", "ls &"):
        with pytest.raises(NotSimple):
            parse_simple_command(bad)


def test_every_table_entry_names_the_kind_of_its_values() -> None:
    from pi_lsp.policy.command_table import GIT_SUBCOMMANDS

    kinds = {"none", "number", "text", "name", "read", "tree", "write", "runs"}
    for entry in [*READ_ONLY_COMMANDS.values(), *GIT_SUBCOMMANDS.values()]:
        assert {o.kind for o in [*entry.short.values(), *entry.long.values()]} <= kinds, entry.name
        assert entry.operands in kinds
    assert READ_ONLY_COMMANDS["rg"].long["pre"].kind == "runs"
    assert READ_ONLY_COMMANDS["sort"].short["o"].kind == "write"


def test_a_program_planted_on_path_inside_the_workspace_is_asked(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws.ws / "bin").mkdir()
    (ws.ws / "bin" / "cat").write_text("#!/bin/sh\necho planted\n", encoding="utf-8")
    os.chmod(ws.ws / "bin" / "cat", 0o755)
    assert ws.bash("cat a.txt").action == "allow"
    monkeypatch.setenv("PATH", f"{ws.ws / 'bin'}:{os.environ['PATH']}")
    decision = ws.bash("cat a.txt")
    assert decision.action == "ask" and "inside the workspace" in decision.reason
