"""An in-process editor for unit tests of the edit path: it applies edits the way a client does.

``EditorSim`` implements :class:`pi_lsp.editor.connection.EditorConnection` against a real
:class:`DocumentStore` and real files: ``workspace/applyEdit`` is applied with LSP position rules
(checking versions like VS Code), the result is reported back as an incremental ``didChange``,
unopened files it edited are held in memory until saved, and ``pi/saveDocuments`` writes the
disk (keeping the file's BOM) and sends ``didSave``. Behaviours are switched per test.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from lsprotocol.types import ApplyWorkspaceEditParams, ApplyWorkspaceEditResult, Position, Range

from pi_lsp.editor.connection import ClientFeatures, EditorRequestError
from pi_lsp.editor.documents import UTF8_BOM, DocumentStore, path_of_uri
from pi_lsp.editor.positions import LineIndex, apply_text_edits

VSCODE = ClientFeatures(apply_edit=True, document_changes=True, position_encoding="utf-16",
                        save_documents=True, reload_documents=True, edit_closed_files=True, client_name="vscode")
NEOVIM = ClientFeatures(apply_edit=True, is_neovim=True, position_encoding="utf-8", save_documents=True,
                        reload_documents=True, edit_closed_files=True, client_name="Neovim")
PLAIN = ClientFeatures(apply_edit=True, position_encoding="utf-32")


@dataclass
class EditorSim:
    """See the module docstring. ``reply``: how ``applyEdit`` is answered; ``sync``: whether the
    change is reported by ``didChange`` (``"never"`` as clients that sync only when idle;
    ``"without_edit"`` sends a change that lacks the edit); ``user_types``: text inserted at the
    start of the buffer together with the edit (a keystroke racing the agent)."""

    store: DocumentStore
    features: ClientFeatures = VSCODE
    reply: Literal["apply", "refuse", "error", "hang"] = "apply"
    sync: Literal["immediate", "never", "without_edit"] = "immediate"
    user_types: str = ""
    save_reply: Literal["save", "skip", "error"] = "save"
    formatter: bool = False
    received: list[ApplyWorkspaceEditParams] = field(default_factory=list)
    saves: list[list[dict[str, Any]]] = field(default_factory=list)
    reloads: list[list[str]] = field(default_factory=list)
    held: dict[str, str] = field(default_factory=dict)
    logs: list[str] = field(default_factory=list)
    apply_delay: float = 0.0

    async def apply_edit(self, params: ApplyWorkspaceEditParams) -> ApplyWorkspaceEditResult:
        self.received.append(params)
        if self.apply_delay:
            await asyncio.sleep(self.apply_delay)
        if self.reply == "hang":
            await asyncio.Event().wait()
        if self.reply == "error":
            raise EditorRequestError("Edits on 'a.txt' require version 1, you have 5", -32603)
        if self.reply == "refuse":
            return ApplyWorkspaceEditResult(applied=False, failure_reason="the document version changed")
        edit = params.edit
        if edit.document_changes:
            targets = [(dc.text_document.uri, dc.text_document.version, dc.edits) for dc in edit.document_changes]
        else:
            targets = [(uri, None, edits) for uri, edits in (edit.changes or {}).items()]
        for uri, version, edits in targets:
            doc = self.store.by_uri(uri)
            if doc is not None and version is not None and version != doc.version:
                return ApplyWorkspaceEditResult(applied=False, failure_reason="version mismatch")
            if doc is None:
                base = self.held.get(uri)
                if base is None:
                    path = path_of_uri(uri)
                    assert path is not None
                    base = path.read_bytes().removeprefix(UTF8_BOM).decode("utf-8")
                self.held[uri] = apply_text_edits(base, edits, self.features.position_encoding)
                continue
            self._report(uri, doc.text, doc.version, list(edits))
        return ApplyWorkspaceEditResult(applied=True)

    def _report(self, uri: str, text: str, version: int | None, edits: list) -> None:
        """Send the buffer change as incremental didChange events, as a client does."""
        if self.sync == "never":
            return
        encoding = self.features.position_encoding
        step = 5 if self.features.is_neovim else 1  # Neovim's changedtick jumps
        if self.sync == "without_edit":
            changes = [{"range": Range(Position(0, 0), Position(0, 0)), "text": "zz "}]
        else:  # simultaneous TextEdits become sequential changes when sent last-first
            changes = [{"range": e.range, "text": e.new_text} for e in reversed(edits)]
        if self.user_types:
            changes.append({"range": Range(Position(0, 0), Position(0, 0)), "text": self.user_types})
        self.store.did_change(uri, (version or 0) + step, changes, encoding)

    def type_text(self, uri: str, line: int, character: int, text: str) -> None:
        """The user types ``text`` at a position (a didChange)."""
        doc = self.store.by_uri(uri)
        assert doc is not None
        pos = Position(line, character)
        self.store.did_change(uri, (doc.version or 0) + 1, [{"range": Range(pos, pos), "text": text}],
                              self.features.position_encoding)

    async def save_documents(self, documents: list[dict[str, Any]]) -> dict[str, Any]:
        self.saves.append(documents)
        if self.save_reply == "error":
            raise EditorRequestError("Unhandled method pi/saveDocuments", -32601)
        saved, skipped = [], []
        for item in documents:
            uri, version = item["uri"], item["version"]
            doc = self.store.by_uri(uri)
            if self.save_reply == "skip" or (doc is not None and doc.version != version):
                skipped.append({"uri": uri, "reason": "the document changed since the edit"})
                continue
            text = doc.text if doc is not None else self.held.pop(uri)
            path = path_of_uri(uri)
            assert path is not None
            bom = path.exists() and path.read_bytes().startswith(UTF8_BOM)
            if self.formatter:
                text = text.rstrip("\n") + "\n\n"
            path.write_bytes((UTF8_BOM if bom else b"") + text.encode("utf-8"))
            if doc is not None:
                self.store.did_save(uri, text)
            saved.append(uri)
        return {"saved": saved, "skipped": skipped}

    async def reload_documents(self, uris: list[str]) -> dict[str, Any]:
        self.reloads.append(uris)
        for uri in uris:
            doc = self.store.by_uri(uri)
            path = path_of_uri(uri)
            if doc is not None and path is not None:
                text = path.read_bytes().removeprefix(UTF8_BOM).decode("utf-8")
                self.store.did_change(uri, (doc.version or 0) + 1, [{"text": text}], "utf-16")
                self.store.did_save(uri)
        return {"reloaded": uris, "skipped": []}

    def log(self, message: str) -> None:
        self.logs.append(message)

    def with_features(self, **changes: Any) -> "EditorSim":
        """Change capabilities in place (a dataclass ``replace`` of the features)."""
        self.features = replace(self.features, **changes)
        return self


def open_file(store: DocumentStore, path: Path, version: int = 1, text: str | None = None) -> str:
    """didOpen ``path`` with its disk text (BOM dropped) or ``text``; returns the URI."""
    if text is None:
        text = path.read_bytes().removeprefix(UTF8_BOM).decode("utf-8")
    store.did_open(path.as_uri(), text, version)
    return path.as_uri()


def line_index(text: str) -> LineIndex:
    """Shorthand for assertions on positions."""
    return LineIndex(text)
