"""The ``EditorKnowledge`` seam: what the editor's language servers know, as the tools see it (issue 17).

By the LSP spec a server cannot call other servers through the client, so the editor plugins ask
their own language servers for pi-lsp (``pi/languageRequest``, ``pi/diagnostics``,
``pi/diagnosticsChanged``; KNOWLEDGE_SPEC). The daemon implements this protocol over the editor
connection (:mod:`pi_lsp.editor.knowledge`); the tools only ever call it, so they import no pygls
and can be tested with an in-process fake.

Units: lines are 0-based and columns are in the negotiated position encoding
(:attr:`EditorKnowledge.position_encoding`) everywhere in this module, as on the wire; the tools
show the model 1-based lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


class KnowledgeError(Exception):
    """The editor could not answer: ``message`` says why, in words the model can act on."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class KnowledgeTimeout(KnowledgeError):
    """No answer within ``languageServer.timeoutSeconds`` (the request was then cancelled)."""


class LanguageServerFailed(KnowledgeError):
    """The editor answered with an error (a language server's, as ``"<server>: <message>"``)."""


@dataclass(frozen=True)
class LanguageAnswer:
    """A ``pi/languageRequest`` result: ``servers`` asked (empty: none handles the method for that
    file) and ``result``, the LSP result as JSON (dicts and lists, camelCase keys)."""

    servers: tuple[str, ...]
    result: Any


@dataclass(frozen=True)
class Problem:
    """One diagnostic of a document.

    Attributes:
        line: 0-based line of the range's start.
        severity: LSP ``DiagnosticSeverity`` (1 Error, 2 Warning, 3 Information, 4 Hint; a missing
            one counts as 1, as LSP says the client decides and editors show errors).
        message, source, code: as the language server sent them (``code`` as text, or ``None``).
    """

    line: int
    severity: int
    message: str
    source: str | None = None
    code: str | None = None

    @property
    def key(self) -> tuple[int, str, str, str]:
        """What identifies a problem across edits: not its line (lines shift when text is
        inserted above it), but severity, source, code and message (KNOWLEDGE_SPEC)."""
        return self.severity, self.source or "", self.code or "", self.message


@dataclass(frozen=True)
class DocumentDiagnostics:
    """The editor's current diagnostics of one document (``pi/diagnostics``).

    ``path`` is ``None`` for a non-file URI; ``servers`` empty means no language server is
    attached to it (then nothing will settle, and pi-lsp does not wait).
    """

    uri: str
    path: Path | None
    version: int | None
    servers: tuple[str, ...]
    problems: tuple[Problem, ...] = field(default_factory=tuple)


@runtime_checkable
class EditorKnowledge(Protocol):
    """The editor's language servers, through the editor (see the module docstring).

    Every coroutine raises :class:`KnowledgeTimeout` when the editor does not answer in time,
    :class:`LanguageServerFailed` for an error reply and :class:`KnowledgeError` when the editor
    cannot be asked at all (it is gone, or does not offer the method).
    """

    position_encoding: str
    """``"utf-8"``, ``"utf-16"`` or ``"utf-32"``: the encoding of every column on the wire."""

    def unavailable(self, method: str) -> str | None:
        """Why ``method`` (``"textDocument/definition"`` ... or ``"pi/diagnostics"``) cannot be
        asked, or ``None`` when the client advertised it."""
        ...

    def uri_of(self, path: Path) -> str:
        """The document URI the editor uses for ``path`` (an open document's own URI first)."""
        ...

    def path_of(self, uri: str) -> Path | None:
        """The file of a ``file:`` URI, ``None`` for any other scheme."""
        ...

    async def language_request(self, method: str, params: dict[str, Any]) -> LanguageAnswer:
        """``pi/languageRequest {method, params}``: the editor asks its language servers."""
        ...

    async def diagnostics(self, paths: Sequence[Path] | None = None) -> list[DocumentDiagnostics]:
        """``pi/diagnostics``: the given files' diagnostics, or (``None``) every document of the
        workspace the editor has diagnostics for."""
        ...

    def change_count(self, path: Path) -> int:
        """How many ``pi/diagnosticsChanged`` named ``path`` so far (a counter, never reset)."""
        ...

    async def wait_settled(self, path: Path, since: int, settle_seconds: float, quiet_seconds: float) -> bool:
        """Wait until ``path``'s diagnostics changed after count ``since`` and then stayed quiet
        for ``quiet_seconds``, all within ``settle_seconds``; True when they settled in time.
        A change the editor dated to a version of the document older than its version now (a
        report about the text before the last edit) does not count."""
        ...

    def apply_text_edits(self, text: str, edits: Sequence[Any]) -> str:
        """``text`` with LSP ``TextEdit``\\ s (JSON dicts, ranges in ``text``) applied at once.

        Raises ``ValueError`` for overlapping or malformed edits."""
        ...
