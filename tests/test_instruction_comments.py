"""Instruction comments (issue 16): comment syntax by language, the enclosing block, the context
after the removal, the prompt, and the Markdown transcript's chunks."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from pi_lsp.daemon.code_actions import (
    code_actions,
    context_after_removal,
    enclosing_block,
    instruction_prompt,
    line_pieces,
    selection_lines,
    split_lines,
)
from pi_lsp.daemon.comment_syntax import ANY, instruction_of, language_of, syntax_for
from pi_lsp.daemon.run_status import final_line, outcome_line, tool_call_line
from pi_lsp.daemon.transcript_document import TranscriptDocument


@pytest.mark.parametrize(
    ("language", "path", "line", "expected"),
    [
        ("python", "a.py", "# pi: make slugify fold accents", "make slugify fold accents"),
        ("python", "a.py", "    ## Pi:   tidy up  ", "tidy up"),
        ("typescript", "a.ts", "  // pi: return early", "return early"),
        ("rust", "a.rs", "/// pi: document it", "document it"),
        ("c", "a.c", "/* pi: free the buffer */", "free the buffer"),
        ("lua", "a.lua", "-- pi: use vim.uv", "use vim.uv"),
        ("sql", "a.sql", "--- pi: add an index", "add an index"),
        ("emacs-lisp", "a.el", ";;; pi: autoload it", "autoload it"),
        ("html", "a.html", "<!-- pi: add alt text -->", "add alt text"),
        ("markdown", "README.md", "<!--pi:shorten this-->", "shorten this"),
        ("css", "a.css", "/* pi: use variables */", "use variables"),
        ("plaintext", "a.py", "# pi: by extension", "by extension"),
        (None, "Makefile", "# pi: add a clean target", "add a clean target"),
        ("vim", "a.vim", '" pi: map it', "map it"),
    ],
)
def test_instructions_in_each_comment_syntax(language, path, line, expected) -> None:
    assert instruction_of(line, syntax_for(language, path)) == expected


@pytest.mark.parametrize(
    ("language", "line"),
    [
        ("python", "x = 1  # pi: not alone on its line"),
        ("python", "# pi:"),  # no instruction text
        ("python", "# pipeline: not the marker"),
        ("python", "# note: pi: later"),
        ("python", "// pi: wrong syntax for Python"),
        ("typescript", "# pi: wrong syntax for TypeScript"),
        ("html", "<!-- pi: unclosed"),
        ("python", "pi: not a comment"),
    ],
)
def test_lines_that_are_not_instructions(language, line) -> None:
    assert instruction_of(line, syntax_for(language, "x")) is None


def test_an_unknown_language_tries_every_syntax() -> None:
    assert syntax_for("brainfuck", "a.b") is ANY
    assert instruction_of("; pi: anything", ANY) == "anything"
    assert instruction_of("<!-- pi: markup -->", ANY) == "markup"
    assert language_of("plaintext", "/w/a.tsx") == "typescriptreact" and language_of("zig", "a.txt") == "zig"


def test_lines_by_lsp_rules() -> None:
    text = "a\r\nb\rc\n\u2028d\x0ce\n"
    assert split_lines(text) == ["a", "b", "c", "\u2028d\x0ce"]
    assert "".join(line_pieces(text)) == text and len(line_pieces(text)) == 4
    assert split_lines("") == [""] and split_lines("x\n\n") == ["x", ""]


BLOCKS = """\
import re


def slugify(title):
    # pi: fold accents
    text = title.lower()

    return text


# pi: add a docstring
class Slug:
    def a(self):
        pass

    def b(self):
        pass
x = 1

y = 2
"""


def test_the_enclosing_block() -> None:
    lines = split_lines(BLOCKS)
    # inside a body: the paragraph, its owner line above, stopping at the blank line
    assert enclosing_block(lines, 4) == (3, 5)
    # above a class: the whole class, blank lines inside it included, up to the dedent
    assert enclosing_block(lines, 10) == (10, 17)
    # bounded
    assert enclosing_block(lines, 10, max_lines=3) == (10, 13)


def test_the_context_after_the_removal() -> None:
    lines = split_lines(BLOCKS)
    assert context_after_removal(lines, 4, None) == (3, 4)  # lines 5-6 become 4-5 (0-based 3-4)
    assert context_after_removal(lines, 10, None) == (10, 16)
    assert context_after_removal(lines, 4, (0, 4)) == (0, 3)
    assert context_after_removal(["# pi: alone"], 0, None) is None


def test_the_prompt() -> None:
    after = ["def f():", "    return 1"]
    prompt = instruction_prompt("make it 2", "src/a.py", 0, after, (0, 1), "python")
    assert prompt == (
        "make it 2\n\n(Written as a `pi:` comment at line 1 of src/a.py; that comment line has been removed.) "
        "The code it refers to, lines 1-2 of src/a.py as the file is now:\n\n```python\ndef f():\n    return 1\n```"
    )
    fenced = instruction_prompt("x", "a.md", 3, ["```", "code", "```"], (0, 2), "markdown")
    assert "\n````markdown\n```\ncode\n```\n````" in fenced
    assert instruction_prompt("x", "a.py", 0, [], None, "python").endswith("has been removed.)")


def _range(a: int, b: int, end_char: int = 0) -> types.Range:
    return types.Range(start=types.Position(line=a, character=0), end=types.Position(line=b, character=end_char))


def test_code_actions_for_a_cursor_a_selection_and_a_running_agent() -> None:
    lines = split_lines(BLOCKS)
    syntax = syntax_for("python", "a.py")
    assert selection_lines(_range(4, 4, 3)) is None and selection_lines(_range(2, 6)) == (2, 5)
    [run] = code_actions("file:///a.py", lines, _range(4, 4, 3), syntax, literal_support=True, only=None, running=False)
    assert isinstance(run, types.CodeAction) and run.kind == "refactor.pi.run" and run.command is not None
    assert run.command.arguments == [{"uri": "file:///a.py", "line": 4, "instruction": "fold accents"}]
    two = code_actions("file:///a.py", lines, _range(0, 12), syntax, literal_support=False, only=None, running=True)
    assert [a.title for a in two] == [
        "Pi: run this instruction: fold accents", "Pi: run this instruction: add a docstring", "Pi: abort the run"]
    assert all(isinstance(a, types.Command) for a in two)
    assert two[0].arguments[0]["selection"] == {"startLine": 0, "endLine": 11}
    assert code_actions("u", lines, _range(4, 4), syntax, literal_support=True, only=["source"], running=True) == []


def test_status_lines() -> None:
    assert tool_call_line("bash", {"command": "make\n  test"}) == "bash: make test"
    assert tool_call_line("custom", {"a": 1}) == 'custom: {"a": 1}'
    assert tool_call_line("read", "bad") == "read"
    end = {"toolName": "bash", "isError": True, "result": {"content": [{"type": "text", "text": "\nboom\nmore"}]}}
    assert outcome_line(end) == "bash failed: boom"
    assert final_line({"stopReason": "aborted"}) == "Aborted"
    assert final_line({"stopReason": "error", "errorMessage": "no model"}) == "Failed: no model"
    assert final_line({"stopReason": "stop"}) == "Done"


def test_the_transcript_is_appended_in_whole_chunks(tmp_path: Path) -> None:
    path = tmp_path / "sessions" / "s1.md"
    doc = TranscriptDocument(path, "s1", Path("/w"))
    doc.start("fix it\nplease")
    first = path.read_text(encoding="utf-8")
    assert first.startswith("# Pi session s1\n\nWorkspace: `/w`\n\n## Prompt (") and first.endswith("> fix it\n> please\n")
    doc.event({"type": "message_update", "delta": {"type": "text", "text": "Fix"}})  # not recorded
    doc.event({"type": "message_end", "message": {"role": "assistant", "content": [{"type": "text", "text": "Fixing."}]}})
    doc.event({"type": "tool_execution_start", "toolName": "edit", "args": {"path": "a.py"}})
    patch = "--- a.py\n+++ a.py\n@@ -1 +1 @@\n-a\n+b"
    doc.event({"type": "tool_execution_end", "toolName": "edit", "isError": False,
               "result": {"content": [{"type": "text", "text": "Successfully replaced 1 block(s) in a.py."}],
                          "details": {"patch": patch}}})
    doc.approval({"policy": "allow", "decision": "allow", "toolName": "read"})  # routine: left out
    doc.approval({"policy": "ask", "decision": "deny", "toolName": "bash", "scope": "rm -rf x", "reason": "the user declined"})
    doc.end({"stopReason": "stop"})
    text = path.read_text(encoding="utf-8")
    assert text.startswith(first)  # only ever appended
    assert text[len(first):] == (
        "\nFixing.\n"
        "\n- `edit: a.py`\n"
        "  - ✓ edit: Successfully replaced 1 block(s) in a.py.\n"
        f"\n```diff\n{patch}\n```\n"
        "- approval: denied bash `rm -rf x`: the user declined\n"
        "\n## Result\n\nDone\n"
    )
    TranscriptDocument(path, "s1", Path("/w")).start("again")
    assert path.read_text(encoding="utf-8").count("# Pi session s1") == 1


def test_an_unwritable_transcript_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    doc = TranscriptDocument(tmp_path / "file" / "s.md", "s", tmp_path)  # its folder is a file
    doc.start("x")
    doc.end({"stopReason": "stop"})  # no exception


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ("x", "must be an object"),
        ({"line": 1, "instruction": "x"}, "uri must be"),
        ({"uri": "u", "line": True, "instruction": "x"}, "line must be"),
        ({"uri": "u", "line": 1, "instruction": " "}, "instruction must be"),
        ({"uri": "u", "line": 1, "instruction": "x", "selection": {"startLine": 3, "endLine": 2}}, "selection must be"),
        ({"uri": "u", "line": 1, "instruction": "x", "selection": [0, 1]}, "selection must be"),
    ],
)
def test_bad_command_arguments_are_named(value, error) -> None:
    from pi_lsp.daemon.code_actions import InstructionArgs

    with pytest.raises(ValueError, match=error):
        InstructionArgs.from_json(value)


def test_a_moved_instruction_is_found_again_by_its_text() -> None:
    from pi_lsp.daemon.code_actions import InstructionArgs
    from pi_lsp.daemon.commands import _Refused, _relocated

    syntax = syntax_for("python", "a.py")
    args = InstructionArgs("u", 1, "do it", (0, 3))
    assert _relocated(args, ["x", "# pi: do it"], syntax) is args
    assert _relocated(args, ["new", "x", "# pi: do it"], syntax) == InstructionArgs("u", 2, "do it", (1, 4))
    assert _relocated(args, ["# pi: do it"], syntax) == InstructionArgs("u", 0, "do it", None)
    with pytest.raises(_Refused, match="2 lines hold"):
        _relocated(args, ["# pi: do it", "x", "# pi: do it"], syntax)
    with pytest.raises(_Refused, match="no line holds"):
        _relocated(args, ["x"], syntax)


def test_revert_actions_filtering_and_arguments() -> None:
    from pi_lsp.daemon.change_actions import as_code_actions, parse_revert_argument

    found = [("Pi: undo this agent hunk", "pi.revertHunk", {"sessionId": "s", "hunk": "h1"})]
    [action] = as_code_actions(found, literal_support=True, only=["refactor"])
    assert isinstance(action, types.CodeAction) and action.kind == "refactor.pi.revert"
    assert as_code_actions(found, literal_support=True, only=["quickfix"]) == []
    [command] = as_code_actions(found, literal_support=False, only=None)
    assert isinstance(command, types.Command) and command.arguments == [{"sessionId": "s", "hunk": "h1"}]
    assert parse_revert_argument("pi.revertTurn", [{"sessionId": "s", "turn": 2}]) == ("s", None, 2)
    for bad, error in ((["x"], "expects one argument"), ([{"sessionId": "s", "turn": 0}], "turn must be"),
                       ([{"turn": 1}], "sessionId must be")):
        with pytest.raises(ValueError, match=error):
            parse_revert_argument("pi.revertTurn", bad)
