"""Code actions for editors without a pi-lsp plugin (issue 16): "Pi: run this instruction".

An instruction comment (:mod:`pi_lsp.daemon.comment_syntax`) on a line that a
``textDocument/codeAction`` range touches is offered as a code action whose command is
``pi.runInstruction`` with :class:`InstructionArgs`; the command (``pi_lsp.daemon.commands``)
removes the line through the edit path and starts the agent with :func:`instruction_prompt`.
While a run is active, every code action request also offers "Pi: abort the run" (``pi.abort``),
so clients that cannot call ``workspace/executeCommand`` by name can still stop it.

Kinds are ``refactor.pi.run`` and ``refactor.pi.abort``: ``refactor`` is in every client's
``codeActionKind.valueSet``, generic clients (Neovim, eglot, Helix, Zed) list it by default, and a
plugin hides both with the prefix ``refactor.pi``. Clients without ``codeActionLiteralSupport``
get bare ``Command``\\ s (LSP 3.17, textDocument/codeAction).

Lines are 0-based, as in LSP; a line is text between LSP line breaks (``\\n``, ``\\r\\n``, ``\\r``),
so no position encoding is involved: only whole lines are used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from pi_lsp.daemon.command_names import ABORT, KIND_ABORT, KIND_RUN, PROMPT, RUN_INSTRUCTION
from pi_lsp.daemon.command_names import INSTRUCTION_COMMANDS as COMMANDS
from pi_lsp.daemon.comment_syntax import CommentSyntax, instruction_of

RUN_TITLE = "Pi: run this instruction"
ABORT_TITLE = "Pi: abort the run"

MAX_BLOCK_LINES = 100
"""At most this many lines above and below the instruction go along as its enclosing block."""
MAX_SCAN_LINES = 2000
"""A code action range longer than this is only searched for instructions in its first lines."""

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_PIECE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str) -> list[str]:
    """``text``'s lines without their breaks, by LSP's rules (a final break ends the last line,
    it does not start an empty one)."""
    lines = _LINE_BREAK.split(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


def line_pieces(text: str) -> list[str]:
    """``text``'s lines **with** their breaks (LSP rules); ``"".join(line_pieces(t)) == t``."""
    return _PIECE.findall(text)


@dataclass(frozen=True)
class InstructionArgs:
    """The argument of ``pi.runInstruction``: ``{uri, line, instruction, selection?}``.

    Attributes:
        uri: the document.
        line: 0-based line of the instruction comment.
        instruction: the instruction text (checked again when the command runs).
        selection: ``(first, last)`` 0-based lines (inclusive) of a selection that goes along as
            context, or ``None`` for the enclosing block.
    """

    uri: str
    line: int
    instruction: str
    selection: tuple[int, int] | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON object sent in the command's ``arguments``."""
        value: dict[str, Any] = {"uri": self.uri, "line": self.line, "instruction": self.instruction}
        if self.selection is not None:
            value["selection"] = {"startLine": self.selection[0], "endLine": self.selection[1]}
        return value

    @classmethod
    def from_json(cls, value: Any) -> "InstructionArgs":
        """Parse the command argument; ``ValueError`` naming the bad field."""
        if not isinstance(value, dict):
            raise ValueError("the argument must be an object {uri, line, instruction, selection?}")
        uri, line, instruction = value.get("uri"), value.get("line"), value.get("instruction")
        if not isinstance(uri, str) or not uri:
            raise ValueError("uri must be a non-empty string")
        if not _line_number(line):
            raise ValueError("line must be a non-negative integer")
        if not isinstance(instruction, str) or not instruction.strip():
            raise ValueError("instruction must be a non-empty string")
        selection = None
        raw = value.get("selection")
        if raw is not None:
            first = raw.get("startLine") if isinstance(raw, dict) else None
            last = raw.get("endLine") if isinstance(raw, dict) else None
            if not (_line_number(first) and _line_number(last) and first <= last):
                raise ValueError("selection must be {startLine, endLine} with 0 <= startLine <= endLine")
            selection = (first, last)
        return cls(uri, line, instruction, selection)


def _line_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def selection_lines(range_: types.Range) -> tuple[int, int] | None:
    """The whole lines a code action range selects, or ``None`` for a range within one line (a
    cursor). A range ending at column 0 of a later line does not include that line."""
    first, last = range_.start.line, range_.end.line
    if last > first and range_.end.character == 0:
        last -= 1
    return (first, last) if last > first else None


def find_instructions(
    lines: list[str], range_: types.Range, syntax: CommentSyntax
) -> list[tuple[int, str]]:
    """``(line, instruction)`` for every instruction comment on the lines ``range_`` touches."""
    first = max(0, range_.start.line)
    last = min(len(lines) - 1, range_.end.line, first + MAX_SCAN_LINES)
    found = []
    for index in range(first, last + 1):
        instruction = instruction_of(lines[index], syntax)
        if instruction is not None:
            found.append((index, instruction))
    return found


def code_actions(
    uri: str,
    lines: list[str],
    range_: types.Range,
    syntax: CommentSyntax,
    *,
    literal_support: bool,
    only: list[str] | None,
    running: bool,
) -> list[types.CodeAction | types.Command]:
    """The pi code actions for a ``textDocument/codeAction`` request (see the module docstring).

    ``only`` is the request's ``context.only`` (an action is offered when one of its kinds is a
    prefix of the action's kind, LSP's hierarchical kinds); ``running`` adds the abort action.
    """
    actions: list[types.CodeAction | types.Command] = []
    selection = selection_lines(range_)
    found = find_instructions(lines, range_, syntax)
    for line, instruction in found:
        title = RUN_TITLE if len(found) == 1 else f"{RUN_TITLE}: {_short(instruction)}"
        args = InstructionArgs(uri, line, instruction, selection)
        command = types.Command(title=title, command=RUN_INSTRUCTION, arguments=[args.to_json()])
        if _wanted(KIND_RUN, only):
            actions.append(_action(title, KIND_RUN, command, literal_support))
    if running and _wanted(KIND_ABORT, only):
        command = types.Command(title=ABORT_TITLE, command=ABORT, arguments=[])
        actions.append(_action(ABORT_TITLE, KIND_ABORT, command, literal_support))
    return actions


def _action(title: str, kind: str, command: types.Command, literal_support: bool) -> types.CodeAction | types.Command:
    if not literal_support:
        return command
    return types.CodeAction(title=title, kind=kind, command=command)


def _wanted(kind: str, only: list[str] | None) -> bool:
    if not only:
        return True
    return any(kind == prefix or kind.startswith(prefix + ".") for prefix in only)


def _short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def enclosing_block(lines: list[str], index: int, max_lines: int = MAX_BLOCK_LINES) -> tuple[int, int]:
    """The block an instruction on line ``index`` refers to: ``(first, last)`` 0-based, inclusive.

    Downwards: the following lines until a line indented less than the instruction, or a blank
    line after which the code does not continue more deeply indented (blank lines inside a body
    belong to it). Upwards: the lines of the same paragraph indented at least as much, plus the
    less indented line that owns them (a ``def`` or ``if`` header). At most ``max_lines`` each way.
    """
    indent = _indent(lines[index])
    last, j = index, index + 1
    while j < len(lines) and j - index <= max_lines:
        if not lines[j].strip():
            k = j
            while k < len(lines) and not lines[k].strip():
                k += 1
            if k == len(lines) or _indent(lines[k]) <= indent or k - index > max_lines:
                break
            j = k
            continue
        if _indent(lines[j]) < indent:
            break
        last, j = j, j + 1
    first, j = index, index - 1
    while j >= 0 and index - j <= max_lines:
        if not lines[j].strip():
            break
        first = j
        if _indent(lines[j]) < indent:
            break
        j -= 1
    return first, last


def instruction_prompt(
    instruction: str, path: str, line: int, lines_after: list[str], context: tuple[int, int] | None, language: str
) -> str:
    """The prompt of an instruction: its text, where it was written, and the code it refers to.

    ``lines_after`` are the document's lines after the instruction line was removed; ``context``
    is the ``(first, last)`` 0-based inclusive range of those lines that goes along (``None`` or an
    empty range: none). Line numbers in the prompt are 1-based, as the read tool counts them.
    """
    where = f"(Written as a `pi:` comment at line {line + 1} of {path}; that comment line has been removed.)"
    if context is None or not lines_after:
        return f"{instruction}\n\n{where}"
    first, last = max(0, context[0]), min(len(lines_after) - 1, context[1])
    if last < first:
        return f"{instruction}\n\n{where}"
    body = "\n".join(lines_after[first:last + 1])
    fence = "```"
    while fence in body:
        fence += "`"
    return (
        f"{instruction}\n\n{where} The code it refers to, lines {first + 1}-{last + 1} of {path} "
        f"as the file is now:\n\n{fence}{language}\n{body}\n{fence}"
    )


def context_after_removal(
    lines: list[str], line: int, selection: tuple[int, int] | None
) -> tuple[int, int] | None:
    """The context range in the numbering after the instruction line ``line`` is removed: the
    selection (clipped to the document) or :func:`enclosing_block`; ``None`` when nothing is left."""
    first, last = selection if selection is not None else enclosing_block(lines, line)
    last = min(last, len(lines) - 1)
    if first > last:
        return None
    first = first if first <= line else first - 1
    last = last if last < line else last - 1
    return (first, last) if last >= first else None
