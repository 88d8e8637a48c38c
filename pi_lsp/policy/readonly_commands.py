"""The short table of simple read-only commands bash may run without asking (issue 9).

A bash command is allowed without asking only when :func:`readonly_problem` finds nothing:

1. it is one simple command (:func:`pi_lsp.policy.shell_words.split_words`: no ``;``, ``|``,
   ``&``, ``>``, ``<``, ``$(``, backticks, newlines, ...);
2. its first word is a name in :data:`READ_ONLY_COMMANDS` (exactly: not a path, not an assignment,
   not a wrapper such as ``env`` or ``xargs``);
3. none of its options is one of that command's dangerous options (``find -delete``/``-exec``,
   ``git --output``, ``rg --pre``, ``sort -o``, ...). Short options are checked inside clusters
   (``sort -uo f``), long ones also when abbreviated (GNU and git accept ``--o=f`` for
   ``--output``); ``git`` must be followed directly by one of its read-only subcommands (so no
   ``git -c core.pager=...``);
4. every argument that may name a file passes the ``check_path`` callback (the policy: inside the
   workspace, and for commands that print file contents, not a protected path). Glob words are
   expanded the way bash would (hidden names only with a leading ``.``) and every match is
   checked; ``~`` is the home directory.

Anything else is asked about, with the problem as the reason shown to the user.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pi_lsp.policy.shell_words import NotSimple, Word, split_words

MAX_GLOB_MATCHES = 1000
"""A glob word expanding to more files than this is not judged (the command is asked about)."""


@dataclass(frozen=True)
class ReadOnlyCommand:
    """One entry of the table.

    Attributes:
        name: the command name (first word).
        short: dangerous short option letters (checked in every ``-abc`` cluster).
        long: dangerous long options (``--output``; abbreviations such as ``--o`` match too).
        words: dangerous single-dash words (``find``'s primaries such as ``-delete``).
        subcommands: when set, the second word must be one of these (``git``).
        paths: ``"none"`` (arguments are not files: ``echo``), ``"names"`` (only names or metadata
            are shown: ``ls``, ``find``) or ``"contents"`` (file contents are shown: ``cat``).
    """

    name: str
    short: str = ""
    long: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    subcommands: tuple[str, ...] | None = None
    paths: str = "names"


def _table(*entries: ReadOnlyCommand) -> dict[str, ReadOnlyCommand]:
    return {entry.name: entry for entry in entries}


_GREP = {"short": "f", "long": ("--file",), "paths": "contents"}

READ_ONLY_COMMANDS: dict[str, ReadOnlyCommand] = _table(
    ReadOnlyCommand("ls"),
    ReadOnlyCommand("pwd", paths="none"),
    ReadOnlyCommand("echo", paths="none"),
    ReadOnlyCommand("whoami", paths="none"),
    ReadOnlyCommand("uname", paths="none"),
    ReadOnlyCommand("which", paths="none"),
    ReadOnlyCommand("cat", paths="contents"),
    ReadOnlyCommand("head", paths="contents"),
    ReadOnlyCommand("tail", paths="contents"),
    ReadOnlyCommand("wc"),
    ReadOnlyCommand("stat"),
    ReadOnlyCommand("du"),
    ReadOnlyCommand("file", short="C", long=("--compile",)),
    ReadOnlyCommand("tree", short="o"),
    ReadOnlyCommand("basename", paths="none"),
    ReadOnlyCommand("dirname", paths="none"),
    ReadOnlyCommand("realpath"),
    ReadOnlyCommand("readlink"),
    ReadOnlyCommand("diff", paths="contents"),
    ReadOnlyCommand("cmp", paths="contents"),
    ReadOnlyCommand("sort", short="o", long=("--output", "--compress-program"), paths="contents"),
    ReadOnlyCommand("grep", **_GREP),  # type: ignore[arg-type]
    ReadOnlyCommand("egrep", **_GREP),  # type: ignore[arg-type]
    ReadOnlyCommand("fgrep", **_GREP),  # type: ignore[arg-type]
    ReadOnlyCommand("rg", short="f", long=("--pre", "--file", "--hostname-bin"), paths="contents"),
    ReadOnlyCommand(
        "find",
        words=("-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"),
    ),
    ReadOnlyCommand(
        "git",
        short="O",
        long=("--output", "--ext-diff", "--open-files-in-pager", "--textconv"),
        subcommands=("status", "log", "diff", "show", "blame", "ls-files", "rev-parse", "grep"),
        paths="contents",
    ),
)
"""The simple read-only commands and their dangerous options (see the module docstring)."""

CheckPath = Callable[[Path, bool], str | None]
"""``check_path(absolute_path, shows_contents) -> problem or None``."""


def readonly_problem(command: str, cwd: Path, check_path: CheckPath) -> str | None:
    """``None`` when ``command`` is a single simple read-only command whose files all pass
    ``check_path``; otherwise the reason it must be asked about (one sentence for the user).

    ``cwd`` is where bash runs (relative arguments resolve against it). Never raises.
    """
    try:
        words = split_words(command)
    except NotSimple as exc:
        return str(exc)
    if not words:
        return "the command is empty"
    head = words[0]
    entry = READ_ONLY_COMMANDS.get(head.text) if not (head.glob or head.home) else None
    if entry is None:
        return f"`{head.text}` is not in the table of read-only commands"
    args = words[1:]
    if entry.subcommands is not None:
        if not args or args[0].glob or args[0].text not in entry.subcommands:
            shown = args[0].text if args else ""
            return f"`{entry.name} {shown}`".replace(" `", "`") + " is not a read-only subcommand"
        args = args[1:]
    problem = _option_problem(entry, args)
    if problem is not None or entry.paths == "none":
        return problem
    return _path_problem(entry, args, cwd, check_path)


def _option_problem(entry: ReadOnlyCommand, args: list[Word]) -> str | None:
    for word in args:
        text = word.text
        if text == "--" and not entry.words:  # find takes no "--": its primaries still follow
            return None
        if text in entry.words:
            return f"`{entry.name} {text}` can change files or run commands"
        if text.startswith("--"):
            name = text.split("=", 1)[0]
            for danger in entry.long:
                if name == danger or (len(name) >= 3 and danger.startswith(name)):
                    return f"`{entry.name} {danger}` can write files or run commands"
        elif text.startswith("-") and len(text) > 1 and not entry.words:
            for letter in text[1:]:
                if letter in entry.short:
                    return f"`{entry.name} -{letter}` can write files or run commands"
    return None


def _path_problem(entry: ReadOnlyCommand, args: list[Word], cwd: Path, check_path: CheckPath) -> str | None:
    contents = entry.paths == "contents"
    options_done = False
    candidates: list[Word] = []
    for word in args:
        if not options_done and word.text == "--":
            options_done = True
            continue
        if not options_done and word.text.startswith("-") and len(word.text) > 1:
            if "=" in word.text:  # --file=PATH
                value = word.text.split("=", 1)[1]
                candidates.append(Word(value, glob=word.glob))
            continue
        candidates.append(word)
    for word in candidates:
        try:
            paths = _expand(word, cwd)
        except _TooMany:
            return f"`{word.text}` matches more than {MAX_GLOB_MATCHES} files"
        for path in paths:
            problem = check_path(path, contents)
            if problem is not None:
                return problem
    return None


class _TooMany(Exception):
    pass


def _expand(word: Word, cwd: Path) -> list[Path]:
    """The absolute paths ``word`` may name once bash expanded it (the word itself if no match)."""
    text = word.text
    if word.home:
        text = str(Path.home()) + text[1:]
    base = text if os.path.isabs(text) else os.path.join(cwd, text)
    paths = [Path(os.path.normpath(base))]
    if word.glob:
        matches: list[Path] = []
        for match in glob.iglob(text, root_dir=cwd):
            matches.append(Path(os.path.normpath(os.path.join(cwd, match))))
            if len(matches) > MAX_GLOB_MATCHES:
                raise _TooMany()
        paths += matches
    return paths
