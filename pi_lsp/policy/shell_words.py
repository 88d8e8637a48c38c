"""A deliberately small reader of bash command lines: one simple command, or a refusal.

It accepts only what can be judged statically: words separated by spaces and tabs, with single
quotes, double quotes and backslash escapes (bash's quote removal is applied). Everything that
could run another command, redirect, or make the words differ from what is read here is refused
with the reason, so the command is asked about instead:

- ``;``, ``|``, ``&`` (also ``&&``, ``||``, background), ``>``, ``<`` (also here-strings and
  process substitution), ``(``, ``)``, newlines and carriage returns (even quoted), NUL;
- ``$`` outside single quotes (parameter, command and arithmetic expansion, ``$(...)``) and
  backticks anywhere outside single quotes;
- unquoted ``{``/``}`` (brace expansion can produce new words such as ``-delete``) and ``#``
  starting a word (a comment);
- ``~`` starting a word unless it is ``~`` or ``~/...`` (``~user`` names another home);
- an unterminated quote or a trailing backslash.

Unquoted ``*``, ``?`` and ``[`` mark a word as a glob (bash expands it against the file system);
``~`` and ``~/`` at the start of a word mark it for home expansion.
"""

from __future__ import annotations

from dataclasses import dataclass

_BLANK = " \t"
_OPERATORS = {
    ";": "`;` chains commands",
    "|": "`|` pipes into another command",
    "&": "`&` runs commands in the background or chains them",
    ">": "`>` redirects output to a file",
    "<": "`<` redirects input or substitutes a process",
    "(": "`(` starts a subshell or a substitution",
    ")": "`)` ends a subshell or a substitution",
    "{": "`{` is brace expansion or a command group",
    "}": "`}` is brace expansion or a command group",
}
_DOLLAR = "`$` expands variables or substitutes commands (`$(...)`)"
_BACKTICK = "backticks substitute a command"
_NEWLINE = "a newline separates commands"
_GLOB_CHARS = "*?["


@dataclass(frozen=True)
class Word:
    """One word after quote removal.

    ``glob``: it holds an unquoted ``*``, ``?`` or ``[`` (bash may expand it); ``home``: it starts
    with an unquoted ``~`` that bash replaces with the home directory (``text`` keeps the ``~``).
    """

    text: str
    glob: bool = False
    home: bool = False


class NotSimple(ValueError):
    """The command line is not one simple command this reader can judge; ``str()`` says why."""


def split_words(command: str) -> list[Word]:
    """The words of ``command`` (see the module docstring); raises :class:`NotSimple`.

    An empty or blank command gives ``[]``.
    """
    if "\x00" in command:
        raise NotSimple("the command holds a NUL character")
    if "\n" in command or "\r" in command:
        raise NotSimple(_NEWLINE)
    words: list[Word] = []
    i, n = 0, len(command)
    while i < n:
        while i < n and command[i] in _BLANK:
            i += 1
        if i >= n:
            break
        i = _read_word(command, i, words)
    return words


def _read_word(command: str, start: int, words: list[Word]) -> int:
    """Read the word at ``start``; append it to ``words``; return the index after it."""
    text: list[str] = []
    glob = False
    home = False
    i, n = start, len(command)
    if command[i] == "#":
        raise NotSimple("`#` starts a comment")
    if command[i] == "~":
        if i + 1 < n and command[i + 1] not in "/" + _BLANK:
            raise NotSimple("`~name` expands to another user's home directory")
        home = True
    while i < n and command[i] not in _BLANK:
        char = command[i]
        if char == "'":
            end = command.find("'", i + 1)
            if end < 0:
                raise NotSimple("a single quote is not closed")
            text.append(command[i + 1 : end])
            i = end + 1
        elif char == '"':
            i = _read_double_quoted(command, i + 1, text)
        elif char == "\\":
            if i + 1 >= n:
                raise NotSimple("the command ends with a backslash")
            text.append(command[i + 1])
            i += 2
        elif char in _OPERATORS:
            raise NotSimple(_OPERATORS[char])
        elif char == "$":
            raise NotSimple(_DOLLAR)
        elif char == "`":
            raise NotSimple(_BACKTICK)
        else:
            if char in _GLOB_CHARS:
                glob = True
            text.append(char)
            i += 1
    words.append(Word("".join(text), glob=glob, home=home))
    return i


def _read_double_quoted(command: str, i: int, text: list[str]) -> int:
    """Read up to the closing ``"``; return the index after it."""
    n = len(command)
    while i < n:
        char = command[i]
        if char == '"':
            return i + 1
        if char == "$":
            raise NotSimple(_DOLLAR)
        if char == "`":
            raise NotSimple(_BACKTICK)
        if char == "\\" and i + 1 < n and command[i + 1] in '$`"\\':
            text.append(command[i + 1])
            i += 2
            continue
        text.append(char)
        i += 1
    raise NotSimple("a double quote is not closed")
