"""The client profiles of :class:`~pi_lsp.demo.fake_editor.FakeEditor`: capabilities and quirks.

Each profile reproduces what real-clients.md measured for a real editor (behaviour matrix):

==========  ================  ===================  ==========================  =====================
profile     versions          ``didChange``        stale versioned edit        ``documentChanges``
==========  ================  ===================  ==========================  =====================
``vscode``  1, 2, 3 ...       before the reply     ``applied: false``          advertised
``neovim``  changedtick (+4)  150 ms after reply   skipped, ``applied: true``  not advertised (used)
``eglot``   0, 1, 2 ...       only on ``flush()``  JSON-RPC error              advertised
==========  ================  ===================  ==========================  =====================

Neovim also applies an edit whose version is *newer* than the buffer's (it only checks ``<``);
VS Code and eglot want the exact version. Neovim is ``clientInfo`` ``Neovim`` with UTF-8 first.

Units: ``sync_delay`` in seconds; versions are the client's integers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from lsprotocol import types

SyncMode = Literal["before_reply", "after_reply", "never"]
"""When an applied edit's ``didChange`` is sent: before the ``applyEdit`` reply, after it, or only
on :meth:`FakeEditor.flush`."""
StaleReply = Literal["refuse", "skip", "error"]
"""How a stale versioned edit is answered: ``applied: false``; skipped but ``applied: true``; a
JSON-RPC error."""


@dataclass(frozen=True)
class ClientProfile:
    """The quirks of one editor (see the module docstring)."""

    client_name: str
    version_step: int
    sync_mode: SyncMode
    sync_delay: float
    stale_reply: StaleReply
    accept_newer: bool


PROFILES = {
    "vscode": ClientProfile("Visual Studio Code", 1, "before_reply", 0.0, "refuse", False),
    "neovim": ClientProfile("Neovim", 4, "after_reply", 0.15, "skip", True),
    "eglot": ClientProfile("Eglot", 1, "never", 0.0, "error", False),
}
"""The profiles by name; an unknown name behaves as ``vscode``."""

ALL_PI_FEATURES = {
    "saveDocuments": True, "reloadDocuments": True, "editClosedFiles": True, "documentState": True, "toolEvents": True,
}


def profile_capabilities(profile: str, encodings: Sequence[str] | None = None) -> types.ClientCapabilities:
    """Hand-written capabilities of a VS Code-like (``"vscode"``), Neovim-like or eglot-like client
    (eglot: ``documentChanges`` advertised, no ``positionEncodings``, so UTF-16)."""
    neovim = profile == "neovim"
    eglot = profile == "eglot"
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=None if neovim else True,
                normalizes_line_endings=None if neovim or eglot else True,
            ),
            configuration=True,
            workspace_folders=True,
            did_change_configuration=types.DidChangeConfigurationClientCapabilities(),
        ),
        text_document=types.TextDocumentClientCapabilities(
            synchronization=types.TextDocumentSyncClientCapabilities(did_save=True)
        ),
        window=types.WindowClientCapabilities(
            show_message=types.ShowMessageRequestClientCapabilities()
        ),
        general=types.GeneralClientCapabilities(
            position_encodings=list(encodings)
            if encodings is not None
            else (["utf-8", "utf-16", "utf-32"] if neovim else None if eglot else ["utf-16"])
        ),
    )
