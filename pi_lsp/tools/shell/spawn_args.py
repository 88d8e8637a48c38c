"""Arguments for a child process, checked the way Node's ``child_process.spawn`` checks them.

Pi spawns ``bash`` and ``rg`` through Node, which refuses an argument holding a NUL byte with
``The argument 'args[N]' must be a string without null bytes. Received '...'`` and turns lone
surrogates into U+FFFD (UTF-8 cannot hold them). Python raises ``ValueError: embedded null byte``
or ``UnicodeEncodeError`` instead, deep inside ``subprocess``; :func:`spawn_args` gives Node's
result before the spawn.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pi_lsp.agent.js_values import js_inspect_string
from pi_lsp.agent.tool import ToolError

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def spawn_args(args: Sequence[str], *, first_index: int = 0) -> list[str]:
    """``args`` ready for the OS: lone surrogates replaced by U+FFFD.

    ``first_index`` is the position of ``args[0]`` in Node's ``args`` array (the argument list
    after the program), for the message. Raises :class:`ToolError` with Node's words when an
    argument holds a NUL byte.
    """
    ready: list[str] = []
    for index, arg in enumerate(args):
        if "\x00" in arg:
            raise ToolError(
                f"The argument 'args[{first_index + index}]' must be a string without null bytes. "
                f"Received {js_inspect_string(arg)}"
            )
        ready.append(_LONE_SURROGATE.sub("\ufffd", arg))
    return ready
