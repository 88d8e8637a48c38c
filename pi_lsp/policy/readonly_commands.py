"""Which bash commands run without asking: the judge of issue 13 ("allow only what is understood").

:func:`judge_command` allows a command only when every step accounts for it fully:

1. bash's grammar (:mod:`pi_lsp.policy.shell_grammar`, tree-sitter-bash) reads it as **one
   simple command** whose words hold no expansion other than braces, ``~`` and globs, with no
   redirection except ``2>/dev/null``;
2. bash itself expands the words in the working directory (:mod:`pi_lsp.policy.shell_expand`),
   so the judge sees the exact argument vector the command will get (a glob matching a file
   named ``-rf`` is judged as that option);
3. the command name is in :data:`~pi_lsp.policy.command_table.READ_ONLY_COMMANDS` (``find`` and
   ``git`` with their own grammars), written as a plain name (not a path, not a wrapper);
4. every option is in that command's allowlist (:mod:`pi_lsp.policy.command_args`: glued and
   separate values, ``--`` and option values of ``--`` read as the command reads them);
5. every path it opens passes the policy's ``check`` (inside the workspace; for contents, not
   protected, and a regular file or folder: a FIFO, socket or device named for its contents is
   asked about, since reading it could block until the command's timeout). A path is judged as the kernel opens it: joined to the working directory and
   resolved with ``os.path.realpath`` (symlinks component by component, ``..`` after them);
   never normalised as text first. A path read recursively (``grep -r``, ``rg``) is walked
   (without following symlinks, as they do; ``rg`` skips hidden names unless told otherwise) and
   any protected path below it makes the command asked about;
6. the name resolves on ``PATH`` to a program outside the workspace (one written into a
   workspace folder on ``PATH`` is asked about). The command later runs with exactly the judged
   argument vector and that program (:class:`~pi_lsp.tools.bash.Launch`).

Anything else is asked about, with the first problem found as the reason.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pi_lsp.policy.command_args import ArgsRefused, ParsedArgs, ValueKind, parse_args
from pi_lsp.policy.command_table import GIT_SUBCOMMANDS, READ_ONLY_COMMANDS, find_values
from pi_lsp.policy.shell_expand import ExpansionError, expand_words
from pi_lsp.policy.shell_grammar import NotSimple, parse_simple_command

MAX_TREE_ENTRIES = 20_000
"""A recursive read of a tree with more entries than this is asked about (not walked further)."""

CheckPath = Callable[[str, ValueKind], str | None]
"""``check(path, kind) -> problem or None``: ``path`` is absolute, joined to the working
directory but **not** normalised; ``kind`` is ``name``, ``read`` or ``tree``."""

Protected = Callable[[str], str | None]
"""``protected(real_path) -> the pattern protecting it, or None``."""

MayProtect = Callable[[str], bool]
"""``may_protect(name) -> False`` when no pattern can protect an entry of that base name (a fast
pre-check for walks; see :meth:`~pi_lsp.policy.protected_paths.ProtectedPaths.may_protect_name`)."""


@dataclass(frozen=True)
class CommandVerdict:
    """The judgement of one bash command: ``problem`` is ``None`` when it may run without asking;
    ``argv`` the argument vector bash will build (empty when it was not reached); ``git``: the
    command is ``git`` (run it with the config-driven programs disabled); ``stderr_to_null``: it
    ends with ``2>/dev/null``; ``program``: the absolute path ``PATH`` resolves the name to."""

    problem: str | None
    argv: tuple[str, ...] = ()
    git: bool = False
    stderr_to_null: bool = False
    program: str | None = None


def judge_command(
    command: str,
    cwd: Path,
    check: CheckPath,
    protected: Protected,
    *,
    timeout_seconds: float = 5.0,
    env: Mapping[str, str] | None = None,
    may_protect: MayProtect = lambda name: True,
    inside: Callable[[str], bool] = lambda path: False,
) -> CommandVerdict:
    """Judge ``command`` run by bash in ``cwd`` (module docstring). ``inside(real_path)``: the
    path is in the workspace (a program found there on ``PATH`` is not trusted). Never raises."""
    try:
        simple = parse_simple_command(command)
    except NotSimple as exc:
        return CommandVerdict(str(exc))
    environment = dict(os.environ if env is None else env)
    try:
        fields = expand_words(simple.words, cwd, timeout_seconds=timeout_seconds, env=environment)
    except ExpansionError as exc:
        return CommandVerdict(str(exc))
    name_fields = fields[0]
    argv = tuple(field for word in fields for field in word)
    if len(name_fields) != 1 or name_fields[0] != simple.words[0]:
        return CommandVerdict(f"the command name `{simple.words[0]}` is not a plain name", argv)
    name = name_fields[0]
    args = list(argv[1:])
    permute = "POSIXLY_CORRECT" not in environment
    try:
        parsed, shown = _parse(name, args, permute)
    except ArgsRefused as exc:
        return CommandVerdict(str(exc), argv, name == "git")
    for kind, value, source in parsed.values:
        if kind not in ("name", "read", "tree"):
            continue
        hidden = "hidden" in parsed.modes or name != "rg"
        problem = _check_value(cwd, kind, value, check, protected, may_protect, hidden)
        if problem is not None:
            where = f" (the value of `{source}`)" if source not in ("operand",) else ""
            return CommandVerdict(f"{problem}{where}", argv, name == "git")
    program = shutil.which(name, path=environment.get("PATH", os.defpath))
    if program is None:
        return CommandVerdict(f"`{name}` is not found on PATH", argv)
    program = os.path.abspath(program)
    if inside(os.path.realpath(program)):
        return CommandVerdict(f"`{name}` resolves to {program}, inside the workspace", argv)
    return CommandVerdict(None, argv, name == "git", simple.stderr_to_null, program)


def _parse(name: str, args: list[str], permute: bool) -> tuple[ParsedArgs, str]:
    if name == "find":
        return find_values(args), name
    if name == "git":
        if not args:
            raise ArgsRefused("`git` without a subcommand")
        sub = GIT_SUBCOMMANDS.get(args[0])
        if sub is None:
            what = "a global option" if args[0].startswith("-") else "not a subcommand judged read-only"
            raise ArgsRefused(f"`git {args[0]}` is {what}")
        return parse_args(sub, args[1:], permute=True), sub.name
    entry = READ_ONLY_COMMANDS.get(name)
    if entry is None:
        raise ArgsRefused(f"`{name}` is not in the table of read-only commands")
    return parse_args(entry, args, permute=permute), name


def _check_value(
    cwd: Path, kind: ValueKind, value: str, check: CheckPath, protected: Protected, may_protect: MayProtect,
    hidden: bool,
) -> str | None:
    if value == "-" and kind != "name":
        return None  # standard input: /dev/null for the bash tool
    joined = value if os.path.isabs(value) else os.path.join(os.fspath(cwd), value)
    problem = check(joined, kind) or (_special_file_problem(joined) if kind != "name" else None)
    if problem is not None or kind != "tree":
        return problem
    return _tree_problem(joined, protected, may_protect, hidden)


_SPECIAL_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                  (stat.S_ISBLK, "a block device"))


def _special_file_problem(path: str) -> str | None:
    """Why opening ``path`` (followed through links) for its contents is not harmless: a FIFO
    blocks until a writer comes (the call would hang until its timeout), a device or socket reads
    what no file holds; None for a regular file, a folder or a missing path. Recursive reads skip
    such entries below the top (grep -r, rg), so only what the command names is checked, as the
    read tool refuses the same kinds."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    for test, what in _SPECIAL_KINDS:
        if test(mode):
            return f"{path} is {what}; reading it could block or never end"
    return None


def _tree_problem(top: str, protected: Protected, may_protect: MayProtect, hidden: bool) -> str | None:
    """The first protected path a recursive read of ``top`` could open, or why it is not walked."""
    real_top = os.path.realpath(top)
    if not os.path.isdir(real_top):
        return None  # a file: judged by ``check`` already
    entries = 0
    for folder, dirs, files in os.walk(real_top, followlinks=False):
        if not hidden:
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            files = [f for f in files if not f.startswith(".")]
        for name in dirs + files:
            entries += 1
            if entries > MAX_TREE_ENTRIES:
                return f"{top} holds more than {MAX_TREE_ENTRIES} entries to search"
            if not may_protect(name):
                continue
            path = os.path.join(folder, name)
            guard = protected(path)
            if guard is not None:
                return f"a recursive search of {top} would read the protected path {path} ({guard})"
    return None
