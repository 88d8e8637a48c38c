"""The `pi-lsp` command line.

``pi-lsp`` / ``pi-lsp --stdio`` / ``python -m pi_lsp``: the LSP daemon on stdio.
``pi-lsp exec``: the headless tool pipeline on the filesystem (JSON Lines in, JSON Lines out).
``pi-lsp replay``: a loopback model server (OpenAI-compatible, or Anthropic with ``--format
anthropic``) replaying a recorded session.
``pi-lsp demo``: the bundled end-to-end demo.
``pi-lsp mcp``: pi-lsp's tools as an MCP server for other agents (through the editor's daemon).

Each subcommand's module is imported only when it runs, so ``pi-lsp exec`` never imports pygls,
lsprotocol or httpx and starts fast.
"""

from __future__ import annotations

import sys
from importlib import import_module

from pi_lsp.long_lived import long_lived_objects

_SUBCOMMANDS = {
    "exec": "pi_lsp.exec.jsonl_host",
    "replay": "pi_lsp.llm.replay",
    "demo": "pi_lsp.demo.run",
    "mcp": "pi_lsp.mcp.server",
    "serve": "pi_lsp.daemon.stdio_main",
}


def main(argv: list[str] | None = None) -> int:
    """Dispatch to a subcommand's ``main(argv) -> int``; no subcommand starts the daemon."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-V", "--version"):
        from pi_lsp import __version__

        print(f"pi-lsp {__version__}")
        return 0
    if args and args[0] in _SUBCOMMANDS:
        name = args.pop(0)
    else:
        name = "serve"
    with long_lived_objects():  # the modules live until exit: no collection while they load
        module = import_module(_SUBCOMMANDS[name])
    return int(module.main(args) or 0)
