"""Read a bash command line with a real bash grammar: one simple command, or a refusal.

The grammar is tree-sitter's (``tree-sitter`` with the ``tree-sitter-bash`` wheels). Why this
parser: it is maintained (tree-sitter-bash 0.25, 2025) by the project editors use for bash
highlighting, MIT-licensed, ships prebuilt wheels, parses in about 10 microseconds, and marks
everything it cannot parse with ``ERROR``/``MISSING`` nodes instead of guessing. ``bashlex``
(a port of bash's own parser) was the other candidate: its last release is from 2023, it is
GPL-3.0 (pi-lsp is MIT), and it raises on ordinary syntax such as ``[[ ... ]]`` and ``case``.

tree-sitter gives the structure; what the words become is left to bash itself
(:mod:`pi_lsp.policy.shell_expand`), so quote removal, brace, tilde and glob expansion follow
bash's own rules. A command is accepted only when **all** of this holds, else
:class:`NotSimple` says why and the command is asked about:

- the tree has no error or missing node, and its only statement is one ``command`` (no lists,
  pipelines, subshells, compound commands, functions, comments, variable assignments);
- its only redirections, if any, are ``2>/dev/null``;
- every word is made of ``word``, ``number``, ``raw_string`` (``'...'``) and ``string``
  (``"..."`` holding only text) nodes, so no parameter, command, arithmetic or process
  expansion, no ``$'...'``; and the word's source text passes :func:`check_word_text`, a second,
  independent check that it holds nothing bash would expand other than braces, ``~`` and globs;
- the line holds no newline, carriage return or NUL (a backslash-newline joins words in bash but
  splits them in tree-sitter).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache

from tree_sitter import Language, Node, Parser

_WORD_PARTS = frozenset({"word", "number", "raw_string", "string", "concatenation"})
_STRING_PARTS = frozenset({'"', "string_content"})
_UNQUOTED_FORBIDDEN = {
    "$": "`$` expands variables or substitutes commands",
    "`": "backticks substitute a command",
    ";": "`;` chains commands",
    "&": "`&` runs commands in the background or chains them",
    "|": "`|` pipes into another command",
    "<": "`<` redirects input",
    ">": "`>` redirects output",
    "(": "`(` starts a subshell, a substitution or an extended glob",
    ")": "`)` ends a subshell or a substitution",
    " ": "a blank inside a word",
    "\t": "a blank inside a word",
}


class NotSimple(ValueError):
    """The command line is not one simple command that can be judged; ``str()`` says why."""


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command: ``words`` are the source texts of its words (command name first), as
    written (quotes and escapes kept) for bash to expand; ``stderr_to_null``: it ends with
    ``2>/dev/null``."""

    words: tuple[str, ...]
    stderr_to_null: bool = False


_LOCAL = threading.local()


@lru_cache(maxsize=1)
def _language() -> Language:
    import tree_sitter_bash

    return Language(tree_sitter_bash.language())


def _parser() -> Parser:
    """One parser per thread (commands are judged in worker threads; a parser keeps state)."""
    parser = getattr(_LOCAL, "parser", None)
    if parser is None:
        parser = _LOCAL.parser = Parser(_language())
    return parser


def parse_simple_command(command: str) -> SimpleCommand:
    """The one simple command of ``command`` (module docstring); raises :class:`NotSimple`."""
    if "\x00" in command:
        raise NotSimple("the command holds a NUL character")
    if "\n" in command or "\r" in command:
        raise NotSimple("a newline separates commands")
    source = command.encode("utf-8", "surrogateescape")
    root = _parser().parse(source).root_node
    if root.has_error:
        raise NotSimple("bash's grammar cannot read the command (unbalanced quotes or unknown syntax)")
    statements = [child for child in root.children if child.is_named]
    if not statements:
        raise NotSimple("the command is empty")
    unnamed = [child.type for child in root.children if not child.is_named]
    if len(statements) > 1 or unnamed:
        kinds = {statement.type for statement in statements} | set(unnamed)
        if "comment" in kinds:
            raise NotSimple("`#` starts a comment")
        raise NotSimple("the line holds more than one command (`;`, `&`, `&&`, `||` or a newline)")
    statement = statements[0]
    stderr_to_null = False
    if statement.type == "redirected_statement":
        body = statement.child_by_field_name("body")
        for child in statement.children:
            if body is not None and child == body:
                continue
            if not _is_stderr_to_null(child, source):
                raise NotSimple(_redirection(child, source))
        stderr_to_null = True
        if body is None:
            raise NotSimple("a redirection without a command")
        statement = body
    if statement.type != "command":
        raise NotSimple(_describe(statement.type))
    words: list[str] = []
    for child in statement.children:
        if child.type == "command_name":
            if child.named_child_count != 1:
                raise NotSimple("the command name is not a plain word")
            child = child.named_children[0]
        elif child.type == "variable_assignment":
            raise NotSimple("`NAME=value` before a command changes its environment")
        elif child.type in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            raise NotSimple(_redirection(child, source))
        _check_word_node(child)
        text = source[child.start_byte : child.end_byte].decode("utf-8", "surrogateescape")
        check_word_text(text)
        words.append(text)
    if not words:
        raise NotSimple("the command is empty")
    return SimpleCommand(tuple(words), stderr_to_null)


def _is_stderr_to_null(node: Node, source: bytes) -> bool:
    if node.type != "file_redirect":
        return False
    parts = [(child.type, source[child.start_byte : child.end_byte]) for child in node.children]
    return parts == [("file_descriptor", b"2"), (">", b">"), ("word", b"/dev/null")]


def _redirection(node: Node, source: bytes) -> str:
    """Why a redirection other than ``2>/dev/null`` is not judged."""
    text = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
    if node.type != "file_redirect":
        what = "a here-document or here-string feeds input"
    elif "<" in text:
        what = "`<` redirects input"
    else:
        what = "`>` redirects output to a file"
    return f"{what} (`{text}`; only `2>/dev/null` is judged)"


def _check_word_node(node: Node) -> None:
    """Raise unless ``node`` is a word made only of literal text and quotes."""
    if node.type not in _WORD_PARTS:
        raise NotSimple(_describe(node.type))
    if node.type == "string":
        for child in node.children:
            if child.type not in _STRING_PARTS:
                raise NotSimple(_describe(child.type))
    elif node.type == "concatenation":
        for child in node.children:
            _check_word_node(child)


def check_word_text(text: str) -> None:
    """Raise :class:`NotSimple` unless the source text of one word holds only literal characters,
    ``'...'``, ``"..."`` without ``$``/backticks, and backslash escapes: nothing bash would
    expand except braces, ``~`` and globs, and nothing that ends the word."""
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise NotSimple("a single quote is not closed")
            i = end + 1
        elif char == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] in "$`":
                    raise NotSimple(_UNQUOTED_FORBIDDEN[text[i]])
                i += 2 if text[i] == "\\" else 1
            if i >= n:
                raise NotSimple("a double quote is not closed")
            i += 1
        elif char == "\\":
            if i + 1 >= n:
                raise NotSimple("the command ends with a backslash")
            i += 2
        elif char in _UNQUOTED_FORBIDDEN:
            raise NotSimple(_UNQUOTED_FORBIDDEN[char])
        else:
            i += 1


def _describe(kind: str) -> str:
    """Why a node of this type is not judged."""
    reasons = {
        "pipeline": "`|` pipes into another command",
        "list": "`&&` or `||` chains commands",
        "subshell": "`(...)` runs a subshell",
        "command_substitution": "`$(...)` or backticks substitute a command",
        "process_substitution": "`<(...)` substitutes a process",
        "simple_expansion": "`$` expands a variable",
        "expansion": "`${...}` expands a variable",
        "arithmetic_expansion": "`$((...))` evaluates arithmetic",
        "ansi_c_string": "`$'...'` quoting",
        "translated_string": '`$"..."` quoting',
        "variable_assignment": "`NAME=value` changes the environment",
        "comment": "`#` starts a comment",
        "function_definition": "a function definition",
        "test_command": "`[[ ... ]]` is a compound command",
        "negated_command": "`!` negates a command",
    }
    return reasons.get(kind, f"bash syntax that is not judged ({kind.replace('_', ' ')})")
