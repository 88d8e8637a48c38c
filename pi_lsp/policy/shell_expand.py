"""What bash makes of a simple command's words: the exact argument vector, computed by bash.

:func:`expand_words` hands the source texts of the words (already checked by
:mod:`pi_lsp.policy.shell_grammar` to hold no parameter, command, arithmetic or process
expansion) to ``bash --norc --noprofile -c``, one ``set -- WORD`` per word, in the working
directory the command will run in. Bash applies its own brace expansion, tilde expansion, quote
removal and pathname expansion (globs, with bash's own bracket expressions such as ``.[^x]nv``
and ``.[[:alpha:]]nv``, hidden names, ``GLOBIGNORE``) and prints each word's fields NUL-separated.
Nothing else runs: ``set`` and ``printf`` are builtins, and the words cannot hold ``$``,
backticks, ``;``, ``|``, ``&``, ``<``, ``>``, ``(`` or ``)``.

``BASH_ENV`` and ``ENV`` are removed from the environment of this bash (they would run a file);
everything else, ``HOME`` and ``GLOBIGNORE`` included, is the environment the command gets.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

MAX_FIELDS = 1000
"""More fields than this (a glob matching many files) are not judged: the command is asked about."""

_SCRIPT_WORD = 'set -- {word}; printf "%s\\0" "$#" "$@"'
_DROPPED_VARIABLES = ("BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS")


class ExpansionError(ValueError):
    """Bash could not expand the words (a syntax error, a timeout, too many fields); ``str()``
    says why."""


def expand_words(
    words: Sequence[str],
    cwd: Path,
    *,
    timeout_seconds: float,
    env: Mapping[str, str] | None = None,
    bash: str = "/bin/bash",
) -> list[list[str]]:
    """The fields of each word of ``words`` (source texts) once bash expanded them in ``cwd``:
    one list per word, in order (a word may give several fields, or none under ``nullglob``,
    which bash does not set by default). Raises :class:`ExpansionError`."""
    if not words:
        return []
    script = "; ".join(_SCRIPT_WORD.format(word=word) for word in words)
    base = dict(os.environ if env is None else env)
    for name in _DROPPED_VARIABLES:
        base.pop(name, None)
    try:
        done = subprocess.run(
            [bash, "--norc", "--noprofile", "-c", script],
            cwd=cwd, env=base, stdin=subprocess.DEVNULL, capture_output=True,
            timeout=timeout_seconds, check=False,
        )
    except subprocess.TimeoutExpired:
        raise ExpansionError(f"expanding the words took longer than {timeout_seconds:g} s") from None
    except OSError as exc:
        raise ExpansionError(f"bash could not be run to expand the words ({exc.strerror})") from None
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ExpansionError(f"bash could not expand the words ({why[-1] if why else done.returncode})")
    fields = done.stdout.split(b"\0")
    if fields and fields[-1] == b"":
        fields.pop()
    result: list[list[str]] = []
    index = 0
    total = 0
    for _ in words:
        if index >= len(fields):
            raise ExpansionError("bash's expansion ended early")
        count = int(fields[index])
        total += count
        if total > MAX_FIELDS:
            raise ExpansionError(f"the words expand to more than {MAX_FIELDS} arguments")
        chunk = fields[index + 1 : index + 1 + count]
        result.append([os.fsdecode(field) for field in chunk])
        index += 1 + count
    if index != len(fields):
        raise ExpansionError("bash's expansion gave more fields than expected")
    return result
