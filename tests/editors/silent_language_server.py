"""A language server that never answers ``textDocument/definition`` (issue 17's "a server that never
answers"): pygls over stdio, started by eglot in tests/editors/test_emacs_knowledge.py.

It announces ``definitionProvider`` and then leaves every definition request pending until the
client cancels it or exits.
"""

from __future__ import annotations

import asyncio

from lsprotocol import types
from pygls.lsp.server import LanguageServer

server = LanguageServer("silent-server", "1.0")


@server.feature(types.TEXT_DOCUMENT_DEFINITION)
async def definition(params: types.DefinitionParams) -> None:
    """Never answers (waits until cancelled)."""
    await asyncio.Event().wait()


if __name__ == "__main__":
    server.start_io()
