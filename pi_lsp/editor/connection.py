"""What the editor can do, and the narrow interface the edit path uses to talk to it.

:class:`ClientFeatures` is read once from ``InitializeParams`` (design.md section 5: the
capabilities under ``capabilities.experimental.pi``; real-clients.md for Neovim's quirks).
:class:`EditorConnection` is the protocol the daemon (``server.py``) implements over pygls; the edit
path (:mod:`pi_lsp.editor.file_access`) only ever calls it, so it can be unit-tested with an
in-process fake. :class:`EditorSettings` holds the ``pi.edit.*`` settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from lsprotocol.types import ApplyWorkspaceEditParams, ApplyWorkspaceEditResult

Route = Literal["editor", "openDocuments"]
"""``pi.edit.route`` values (design.md section 3)."""


def _get(obj: Any, *names: str) -> Any:
    """Walk attributes or dict keys (``experimental`` arrives as a dict, the rest as attrs)."""
    for name in names:
        if obj is None:
            return None
        obj = obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
    return obj


@dataclass(frozen=True)
class ClientFeatures:
    """The client capabilities the edit path depends on.

    Attributes:
        apply_edit: ``workspace.applyEdit``; without it every write goes to disk (Pi's behaviour).
        document_changes: ``workspace.workspaceEdit.documentChanges``.
        is_neovim: ``clientInfo.name`` is Neovim: it applies versioned ``TextDocumentEdit``\\ s
            without advertising ``documentChanges`` (real-clients.md pitfall 7).
        position_encoding: what pygls negotiated (``"utf-8"``, ``"utf-16"`` or ``"utf-32"``).
        save_documents, reload_documents, edit_closed_files, document_state, approvals,
            tool_events: the booleans under ``capabilities.experimental.pi`` (design.md section 5;
            ``approvals``: the client answers ``pi/requestApproval``, APPROVALS_SPEC;
            ``tool_events``: the client wants ``pi/event`` tool events for its own
            ``pi/executeToolCall(s)``, issue 21).
        normalizes_line_endings: ``workspace.workspaceEdit.normalizesLineEndings``.
        review: ``capabilities.experimental.pi.review``: the client answers ``pi/reviewEdit``.
        change_annotations: ``workspace.workspaceEdit.changeAnnotationSupport`` is advertised
            (the client can ask the user to confirm an annotated edit, ``needsConfirmation``).
        client_name: ``clientInfo.name`` or ``""``.
        diagnostics: ``experimental.pi.diagnostics``: the client answers ``pi/diagnostics`` and
            sends ``pi/diagnosticsChanged`` (issue 17, KNOWLEDGE_SPEC).
        language_requests: ``experimental.pi.languageRequests``: the LSP methods the client
            answers through ``pi/languageRequest`` (strings only, in the client's order).
    """

    apply_edit: bool = False
    document_changes: bool = False
    is_neovim: bool = False
    position_encoding: str = "utf-16"
    save_documents: bool = False
    reload_documents: bool = False
    edit_closed_files: bool = False
    document_state: bool = False
    approvals: bool = False
    tool_events: bool = False
    normalizes_line_endings: bool = False
    review: bool = False
    change_annotations: bool = False
    client_name: str = ""
    diagnostics: bool = False
    language_requests: tuple[str, ...] = ()

    @property
    def versioned_edits(self) -> bool:
        """Send ``documentChanges`` with versions (design.md section 4 step 3)."""
        return self.document_changes or self.is_neovim

    @classmethod
    def from_initialize(cls, params: Any, position_encoding: Any = "utf-16") -> "ClientFeatures":
        """Read the features from ``InitializeParams`` (an lsprotocol object or its JSON dict).

        ``position_encoding`` is the encoding pygls negotiated (a ``PositionEncodingKind`` or its
        string value); pass it in, this function does not negotiate. Missing or malformed parts
        count as "not supported"; never raises.
        """
        caps = _get(params, "capabilities")
        workspace = _get(caps, "workspace")
        workspace_edit = _get(workspace, "workspace_edit") or _get(workspace, "workspaceEdit")
        name = _get(params, "client_info", "name") or _get(params, "clientInfo", "name") or ""
        pi = _get(caps, "experimental", "pi")
        if not isinstance(pi, dict):
            pi = {}

        def flag(value: Any) -> bool:
            return value is True

        return cls(
            apply_edit=flag(_get(workspace, "apply_edit") or _get(workspace, "applyEdit")),
            document_changes=flag(
                _get(workspace_edit, "document_changes") or _get(workspace_edit, "documentChanges")
            ),
            is_neovim=isinstance(name, str) and name.lower().startswith("neovim"),
            position_encoding=str(getattr(position_encoding, "value", position_encoding)),
            save_documents=flag(pi.get("saveDocuments")),
            reload_documents=flag(pi.get("reloadDocuments")),
            edit_closed_files=flag(pi.get("editClosedFiles")),
            document_state=flag(pi.get("documentState")),
            approvals=flag(pi.get("approvals")),
            tool_events=flag(pi.get("toolEvents")),
            normalizes_line_endings=flag(
                _get(workspace_edit, "normalizes_line_endings")
                or _get(workspace_edit, "normalizesLineEndings")
            ),
            review=flag(pi.get("review")),
            change_annotations=(
                _get(workspace_edit, "change_annotation_support") or _get(workspace_edit, "changeAnnotationSupport")
            ) is not None,
            client_name=name if isinstance(name, str) else "",
            diagnostics=flag(pi.get("diagnostics")),
            language_requests=_methods(pi.get("languageRequests")),
        )


def _methods(value: Any) -> tuple[str, ...]:
    """``languageRequests``: the string items of a list, duplicates dropped; anything else: none."""
    if not isinstance(value, list):
        return ()
    return tuple(dict.fromkeys(item for item in value if isinstance(item, str)))


@dataclass(frozen=True)
class EditorSettings:
    """The ``pi.edit.*`` settings (design.md section 5). Units: seconds.

    Attributes:
        route: ``"editor"``, ``"openDocuments"`` or ``None`` for the default (``editor`` when the
            client advertises both ``editClosedFiles`` and ``saveDocuments``); decides only for
            files the editor has not opened.
        apply_timeout_seconds: how long to wait for the ``workspace/applyEdit`` reply.
        verify_timeout_seconds: how long to wait for the ``didChange`` that shows the edit.
    """

    route: Route | None = None
    apply_timeout_seconds: float = 30.0
    verify_timeout_seconds: float = 2.0


class EditorRequestError(Exception):
    """The editor answered a server-to-client request with a JSON-RPC error.

    ``code`` is the JSON-RPC error code when known; ``message`` the editor's text (eglot answers a
    stale versioned edit this way instead of ``applied: false``, real-clients.md pitfall 3).
    """

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@runtime_checkable
class EditorConnection(Protocol):
    """The editor, as the edit path sees it. ``server.py`` implements it over pygls.

    Every request method raises :class:`EditorRequestError` when the client answers with a
    JSON-RPC error (including MethodNotFound) and may raise ``ConnectionError`` when the client
    is gone. None of them applies a timeout; the caller does.
    """

    features: ClientFeatures

    async def apply_edit(self, params: ApplyWorkspaceEditParams) -> ApplyWorkspaceEditResult:
        """Send ``workspace/applyEdit`` and return the client's reply."""
        ...

    async def save_documents(self, documents: list[dict[str, Any]]) -> dict[str, Any]:
        """Send ``pi/saveDocuments {documents: [{uri, version}]}``; return the reply dict
        ``{saved: [uri], skipped: [{uri, reason}]}`` (only call when advertised)."""
        ...

    async def reload_documents(self, uris: list[str]) -> dict[str, Any]:
        """Send ``pi/reloadDocuments {uris}``; return ``{reloaded: [uri], skipped: [{uri, reason}]}``."""
        ...

    def log(self, message: str) -> None:
        """Tell the user something (``window/logMessage``); must not raise."""
        ...
