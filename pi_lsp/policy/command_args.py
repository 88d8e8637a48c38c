"""Parse one command's argument vector against an allowlist of its options (issue 13).

A :class:`CommandSpec` lists every option the command may be given without asking, each with
the kind of its value (:data:`ValueKind`), and the kind of its operands. :func:`parse_args`
reads an argument vector the way the command's own parser does (GNU ``getopt_long`` and the
parsers of ``git`` and ``rg`` agree on what matters here):

- ``-abc`` is a cluster of short options; a letter that takes a value takes the rest of the
  word (``-fPATH``, ``-e--``) or, when nothing is left, the next word **whatever it is**
  (``-e --``: ``--`` is the value, it does not end the options);
- ``--name=value`` or ``--name value`` (``--name`` takes the next word whatever it is); an
  option whose value is optional (``--color[=WHEN]``) takes it only after ``=``; a long name
  may be abbreviated to any unambiguous prefix (GNU and git accept ``--o=f`` for ``--output``);
- ``--`` (not a value) ends the options: every later word is an operand; ``-`` is an operand;
- options and operands may be mixed (GNU permutes them) unless ``POSIXLY_CORRECT`` is set, when
  the first operand ends the options;
- an option that is not in the allowlist makes the command asked about (the reason names it).

The result is the list of values the command will open or show, each with its kind, for the
policy to judge (:mod:`pi_lsp.policy.readonly_commands`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

ValueKind = Literal["none", "number", "text", "name", "read", "tree", "write", "runs"]
"""What an option's value or an operand is:

- ``none``: the option takes no value (a flag);
- ``number``: a count or size (``-n 5``, ``-C2``, ``1K``); anything else is refused;
- ``text``: a pattern, a format or a revision: not opened as a file;
- ``name``: a path whose name or metadata is shown (``ls``, ``stat``, ``find``'s start points);
- ``read``: a path whose contents are read and may be shown (``cat``, ``grep``'s files);
- ``tree``: a path read recursively (``grep -r``, ``rg``): every file below it may be shown;
- ``write``: a path that is written (never auto-allowed; listed to say why);
- ``runs``: a value that is run as a program (never auto-allowed; listed to say why).
"""

_NUMBER = re.compile(r"[-+]?[0-9]+[A-Za-z]{0,3}")


class ArgsRefused(ValueError):
    """The arguments cannot be auto-allowed; ``str()`` says why (for the user)."""


@dataclass(frozen=True)
class Option:
    """One allowed option: its value ``kind``; ``optional``: the value only comes after ``=``
    (or glued, for a short option); ``sets``: a mode it switches on (``recursive``, ``hidden``,
    ``pattern-given``)."""

    kind: ValueKind = "none"
    optional: bool = False
    sets: str | None = None


@dataclass(frozen=True)
class CommandSpec:
    """The allowlist of one command.

    Attributes:
        name: the command name (or ``git status`` for a git subcommand).
        short: ``{letter: Option}``.
        long: ``{name without --: Option}``.
        operands: the kind of operands; ``pattern_first``: the first operand is a pattern
            (``grep``, ``rg``) unless an option with ``sets="pattern-given"`` came.
        recursive_operands: the kind operands become once ``recursive`` is set (``grep -r``).
        default_operand: the operand used when none is given (``rg`` and ``grep -r`` search ``.``).
        numeric_shorthand: ``-5`` means ``-n 5`` (``head``, ``tail``, ``git log``).
        options_stop_at_operand: the first operand ends the options (``echo`` takes none at all).
        check: a last check of the parsed call (for example ``git log --format`` values).
    """

    name: str
    short: Mapping[str, Option] = field(default_factory=dict)
    long: Mapping[str, Option] = field(default_factory=dict)
    operands: ValueKind = "read"
    pattern_first: bool = False
    recursive_operands: ValueKind | None = None
    default_operand: str | None = None
    numeric_shorthand: bool = False
    options_stop_at_operand: bool = False
    check: Callable[["ParsedArgs"], None] | None = None


@dataclass
class ParsedArgs:
    """The values a command will open or show: ``values`` as ``(kind, text, shown_as)`` where
    ``shown_as`` is the option that took it (``-f``) or ``operand``; ``modes`` that were set;
    ``options`` as written (long names unabbreviated)."""

    values: list[tuple[ValueKind, str, str]] = field(default_factory=list)
    modes: set[str] = field(default_factory=set)
    options: list[str] = field(default_factory=list)


def spec(
    name: str,
    short: str = "",
    long: str = "",
    **kwargs: object,
) -> CommandSpec:
    """Build a :class:`CommandSpec` from a compact text: ``short="n:number c:number q v"`` and
    ``long="lines=number color?=text quiet recursive!recursive"`` (``=kind`` a value, ``?=kind``
    an optional value, ``!mode`` sets a mode; letters likewise ``r!recursive``)."""
    return CommandSpec(name, _options(short), _options(long), **kwargs)  # type: ignore[arg-type]


def _options(text: str) -> dict[str, Option]:
    options: dict[str, Option] = {}
    for item in text.split():
        sets = None
        if "!" in item:
            item, sets = item.split("!", 1)
        optional = "?=" in item or "?:" in item
        item = item.replace("?=", "=").replace("?:", ":")
        for separator in ("=", ":"):
            if separator in item:
                item, kind = item.split(separator, 1)
                break
        else:
            kind = "none"
        options[item] = Option(kind, optional, sets)  # type: ignore[arg-type]
    return options


def parse_args(spec: CommandSpec, args: Sequence[str], *, permute: bool = True) -> ParsedArgs:
    """Read ``args`` (the words after the command name) with ``spec`` (module docstring).

    ``permute``: options may follow operands (GNU without ``POSIXLY_CORRECT``). Raises
    :class:`ArgsRefused` for an option not in the allowlist, a bad number, or a ``write`` or
    ``runs`` value.
    """
    parsed = ParsedArgs()
    operands: list[str] = []
    options_done = False
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if options_done or word == "-" or not word.startswith("-"):
            operands.append(word)
            if spec.options_stop_at_operand or not permute:
                options_done = True
            continue
        if word == "--":
            options_done = True
            continue
        if word.startswith("--"):
            i = _long(spec, parsed, word, args, i)
        elif spec.numeric_shorthand and word[1:].isdigit():
            parsed.options.append(word)
        else:
            i = _short(spec, parsed, word, args, i)
    kind = spec.operands
    if "recursive" in parsed.modes and spec.recursive_operands is not None:
        kind = spec.recursive_operands
    if spec.pattern_first and "pattern-given" not in parsed.modes:
        if not operands:
            raise ArgsRefused(f"`{spec.name}` without a pattern")
        parsed.values.append(("text", operands.pop(0), "pattern"))
    if not operands and spec.default_operand is not None and (
        spec.recursive_operands is None or "recursive" in parsed.modes
    ):
        operands = [spec.default_operand]
    parsed.values += [(kind, operand, "operand") for operand in operands]
    if spec.check is not None:
        spec.check(parsed)
    return parsed


def _long(spec: CommandSpec, parsed: ParsedArgs, word: str, args: Sequence[str], i: int) -> int:
    name, has_value, value = word[2:].partition("=")
    option_name = _unabbreviate(spec, name, word)
    option = spec.long[option_name]
    shown = f"--{option_name}"
    parsed.options.append(shown)
    _take_mode(parsed, option)
    if option.kind == "none":
        if has_value:
            raise ArgsRefused(f"`{spec.name} {shown}` takes no value")
        return i
    if not has_value:
        if option.optional:
            return i
        if i >= len(args):
            raise ArgsRefused(f"`{spec.name} {shown}` is missing its value")
        value = args[i]
        i += 1
    _take_value(spec, parsed, option, value, shown)
    return i


def _unabbreviate(spec: CommandSpec, name: str, word: str) -> str:
    if name in spec.long:
        return name
    matches = [candidate for candidate in spec.long if candidate.startswith(name)] if name else []
    if len(matches) == 1:
        return matches[0]
    shown = word.split("=", 1)[0]
    if matches:
        raise ArgsRefused(f"`{spec.name} {shown}` is ambiguous")
    raise ArgsRefused(f"`{spec.name} {shown}` is not an option known to be safe")


def _short(spec: CommandSpec, parsed: ParsedArgs, word: str, args: Sequence[str], i: int) -> int:
    position = 1
    while position < len(word):
        letter = word[position]
        position += 1
        option = spec.short.get(letter)
        if option is None:
            raise ArgsRefused(f"`{spec.name} -{letter}` is not an option known to be safe")
        shown = f"-{letter}"
        parsed.options.append(shown)
        _take_mode(parsed, option)
        if option.kind == "none":
            continue
        value = word[position:]
        if not value:
            if option.optional:
                return i
            if i >= len(args):
                raise ArgsRefused(f"`{spec.name} {shown}` is missing its value")
            value = args[i]
            i += 1
        _take_value(spec, parsed, option, value, shown)
        return i
    return i


def _take_mode(parsed: ParsedArgs, option: Option) -> None:
    if option.sets is not None:
        parsed.modes.add(option.sets)


def _take_value(spec: CommandSpec, parsed: ParsedArgs, option: Option, value: str, shown: str) -> None:
    if option.kind == "write":
        raise ArgsRefused(f"`{spec.name} {shown}` writes a file")
    if option.kind == "runs":
        raise ArgsRefused(f"`{spec.name} {shown}` runs a program")
    if option.kind == "number":
        if _NUMBER.fullmatch(value) is None:
            raise ArgsRefused(f"`{spec.name} {shown}` expects a number, got {value!r}")
        return
    parsed.values.append((option.kind, value, shown))
