"""The :class:`~pi_lsp.editor.connection.EditorConnection` over a live pygls server.

Server-to-client requests are awaited in the event loop, never blocked on (real-clients.md
pitfall 1). A JSON-RPC error reply (eglot answers a stale edit that way, pitfall 3; a client without
``pi/saveDocuments`` answers MethodNotFound) becomes :class:`EditorRequestError`. When the caller
stops waiting (the apply timeout), the request stays registered and a late reply is logged
(design.md section 4, step 5).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    default_converter,
)

from pi_lsp.editor.connection import ClientFeatures, EditorRequestError

if TYPE_CHECKING:  # pragma: no cover
    import cattrs

logger = logging.getLogger(__name__)


def raw_dict_converter() -> "cattrs.Converter":
    """pygls converter factory that keeps params and results of custom methods as plain dicts.

    pygls's default turns them into namedtuples with ``rename=True``, which mangles keys that are
    not identifiers (a ``changes`` map keyed by URI arrives as ``_0``; real-clients.md pitfall 2).
    Typed LSP methods (everything lsprotocol knows) are structured as usual. Used by the daemon
    and by :class:`~pi_lsp.demo.fake_editor.FakeEditor`.
    """
    converter = default_converter()
    converter.register_structure_hook(
        JsonRPCRequestMessage, lambda obj, cls: cls(**{"params": None, **obj})
    )
    converter.register_structure_hook(
        JsonRPCNotification, lambda obj, cls: cls(**{"params": None, **obj})
    )
    converter.register_structure_hook(
        JsonRPCResponseMessage, lambda obj, cls: cls(**{"result": None, **obj})
    )
    return converter

SAVE_DOCUMENTS = "pi/saveDocuments"
RELOAD_DOCUMENTS = "pi/reloadDocuments"


class LspEditorConnection:
    """Talks to the editor through ``server`` (a started pygls ``LanguageServer``).

    ``features`` are the client's, read at ``initialize``.
    """

    def __init__(self, server: LanguageServer, features: ClientFeatures) -> None:
        self._server = server
        self.features = features

    async def apply_edit(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        """Send ``workspace/applyEdit``; raise :class:`EditorRequestError` on an error reply.

        Cancelling the awaiting task does not forget the request: its late reply is logged.
        """
        future = asyncio.wrap_future(self._server.workspace_apply_edit(params))
        result = await self._await(future, f"workspace/applyEdit {params.label or ''}".strip())
        if not isinstance(result, types.ApplyWorkspaceEditResult):
            raise EditorRequestError(f"the editor sent a malformed applyEdit reply: {result!r}")
        return result

    async def save_documents(self, documents: list[dict[str, Any]]) -> dict[str, Any]:
        """``pi/saveDocuments {documents: [{uri, version}]}`` -> ``{saved, skipped}``."""
        reply = await self._request(SAVE_DOCUMENTS, {"documents": documents})
        return reply if isinstance(reply, dict) else {"saved": [], "skipped": []}

    async def reload_documents(self, uris: list[str]) -> dict[str, Any]:
        """``pi/reloadDocuments {uris}`` -> ``{reloaded, skipped}``."""
        reply = await self._request(RELOAD_DOCUMENTS, {"uris": uris})
        return reply if isinstance(reply, dict) else {"reloaded": [], "skipped": []}

    async def request_bounded(self, method: str, params: dict[str, Any], timeout: float) -> Any:
        """Send ``method`` and wait at most ``timeout`` seconds for the reply.

        On timeout (or when the caller is cancelled) ``$/cancelRequest`` goes to the client and
        :class:`TimeoutError` is raised (a late reply is dropped). An error reply raises
        :class:`EditorRequestError` with the client's code and message; a client that is gone,
        ``ConnectionError``. Used for ``pi/languageRequest`` and ``pi/diagnostics`` (issue 17).
        """
        msg_id = f"pi-{uuid.uuid4().hex}"
        future = self._server.protocol.send_request_async(method, params, msg_id=msg_id)
        try:
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except (TimeoutError, asyncio.CancelledError):
            self._cancel(msg_id, future)
            raise
        except JsonRpcException as exc:
            raise EditorRequestError(exc.message or str(exc), exc.code) from exc
        except RuntimeError as exc:
            raise ConnectionError(str(exc)) from exc

    def _cancel(self, msg_id: str, future: "asyncio.Future[Any]") -> None:
        future.add_done_callback(lambda done: done.cancelled() or done.exception())  # no "never retrieved"
        try:
            self._server.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        except Exception:  # the client may be gone
            logger.debug("could not send $/cancelRequest for %s", msg_id)

    def log(self, message: str) -> None:
        """``window/logMessage`` at Info level; never raises."""
        try:
            self._server.window_log_message(
                types.LogMessageParams(type=types.MessageType.Info, message=message)
            )
        except Exception:  # the client may be gone
            logger.exception("could not send window/logMessage")

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        future = self._server.protocol.send_request_async(method, params)
        return await self._await(future, method)

    async def _await(self, future: "asyncio.Future[Any]", what: str) -> Any:
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            future.add_done_callback(lambda done: _log_late(done, what))
            raise
        except JsonRpcException as exc:
            raise EditorRequestError(exc.message or str(exc), exc.code) from exc
        except RuntimeError as exc:  # pygls fails pending requests when the client is gone
            raise ConnectionError(str(exc)) from exc


def _log_late(future: "asyncio.Future[Any]", what: str) -> None:
    if future.cancelled():
        return
    error = future.exception()
    if error is not None:
        logger.warning("late error reply to %s: %s", what, error)
    else:
        logger.warning("late reply to %s after the timeout: %r", what, future.result())
