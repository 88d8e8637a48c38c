"""The lifecycle handlers: ``initialize``, ``initialized``, settings, workspace folders, ``shutdown``.

Module-level handlers; :func:`pi_lsp.daemon.server.create_server` registers :data:`FEATURES`.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from pi_lsp import __version__
from pi_lsp.daemon import rpc
from pi_lsp.daemon.client_log import CLIENT_LOG
from pi_lsp.editor.connection import ClientFeatures

if TYPE_CHECKING:
    from pi_lsp.daemon.server import PiLanguageServer

logger = logging.getLogger(__name__)


def initialize(ls: PiLanguageServer, params: types.InitializeParams) -> None:
    """The ``initialize`` handler.

    The reply (capabilities, ``serverInfo``) depends only on the client's capabilities and the
    registered handlers, so it goes out first; the session (settings, :class:`ToolHost`, policy)
    is built by :func:`start_session` right after it is written, or earlier when another message
    arrives first (:meth:`PiLanguageServer.start_pending_session`; issue 21).
    """
    ls.retire_host()  # a second initialize must not leak the first session (issue 12)
    CLIENT_LOG.connect(ls.protocol)  # from now on the log goes to the editor, not stderr
    ls.folders = _initial_folders(params)
    encoding = ls.protocol.workspace.position_encoding or "utf-16"
    ls.features = ClientFeatures.from_initialize(params, encoding)
    options = params.initialization_options
    pi_options = options.get("pi") if isinstance(options, dict) else None
    ls._init_options = pi_options if isinstance(pi_options, dict) else {}
    ls.defer_session_start(lambda: start_session(ls, pi_options))


def start_session(ls: PiLanguageServer, pi_options: Any) -> None:
    """Build the session :func:`initialize` announced: parse the ``pi`` options (``initializationOptions.pi``),
    build the :class:`ToolHost` and the approval policy, show the settings' problems, start the
    private socket when asked."""
    from pi_lsp.daemon.edit_reviews import EditReviews
    from pi_lsp.daemon.settings import parse_settings
    from pi_lsp.daemon.tool_host import ToolHost
    from pi_lsp.editor.lsp_connection import LspEditorConnection

    ls.settings, problems = parse_settings(pi_options)
    reviews = EditReviews(ls.protocol, lambda: ls.features, lambda: ls.settings.edit)
    ls.host = ToolHost(LspEditorConnection(ls, ls.features), ls.folders, ls.settings, reviews)
    problems += ls.host.apply_settings(ls.settings)
    problems += ls.install_policy(ls.host)
    ls.report_settings_problems(problems)
    if ls.settings.external_socket:
        ls.external_start = asyncio.ensure_future(ls.external.start(ls.folders, ls.features.client_name or ""))
    logger.info(
        "initialized for %s (%s), cwd %s", ls.features.client_name or "a client",
        ls.features.position_encoding, ls.folders[0],
    )


async def initialized(ls: PiLanguageServer, params: types.InitializedParams) -> None:
    """The ``initialized`` handler."""
    await ls.pull_settings()
    # the sandbox probe runs bwrap once (it can take a while): in the background, so a session that
    # ends meanwhile does not cancel this handler half-way (pygls would log that as an ERROR)
    probe = asyncio.ensure_future(ls.check_sandbox())
    probe.add_done_callback(_log_probe_failure)


async def did_change_configuration(
    ls: PiLanguageServer, params: types.DidChangeConfigurationParams
) -> None:
    """The ``workspace/didChangeConfiguration`` handler."""
    pushed = params.settings.get("pi") if isinstance(params.settings, dict) else None
    await ls.pull_settings(pushed)


def did_change_folders(
    ls: PiLanguageServer, params: types.DidChangeWorkspaceFoldersParams
) -> None:
    """The ``workspace/didChangeWorkspaceFolders`` handler."""
    removed = {p for f in params.event.removed or [] if (p := _folder_path(f.uri))}
    added = [p for f in params.event.added or [] if (p := _folder_path(f.uri))]
    folders = [f for f in ls.folders if f not in removed]
    folders += [f for f in added if f not in folders]
    ls.folders = folders or ls.folders
    if ls.host is not None:
        ls.host.set_folders(ls.folders)
    ls.external.update(ls.folders, ls.features.client_name or "")


async def shutdown(ls: PiLanguageServer, params: Any) -> None:
    """The ``shutdown`` handler."""
    await ls.end_session()


def _log_probe_failure(probe: asyncio.Future[Any]) -> None:
    if not probe.cancelled() and probe.exception() is not None:
        logger.warning("bash sandbox probe failed: %s", probe.exception())


async def health(ls: PiLanguageServer, params: Any) -> dict[str, Any]:
    """``pi/health``: facts only the server knows, for ``:checkhealth``-style diagnostics:
    ``{"version": str, "sandbox": {"mode", "available", "tool", "reason"}}``."""
    return {"version": __version__, "sandbox": await ls.check_sandbox()}


def _folder_path(uri: str) -> Path | None:
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return Path(path) if path else None


def _initial_folders(params: types.InitializeParams) -> list[Path]:
    folders = [p for f in params.workspace_folders or [] if (p := _folder_path(f.uri))]
    if not folders and params.root_uri:
        folders = [p for p in [_folder_path(params.root_uri)] if p]
    if not folders and params.root_path:
        folders = [Path(params.root_path)]
    return folders or [Path.cwd()]


FEATURES: list[tuple[Any, ...]] = [
    (types.INITIALIZE, initialize),
    (types.INITIALIZED, initialized),
    (types.WORKSPACE_DID_CHANGE_CONFIGURATION, did_change_configuration),
    (types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, did_change_folders),
    (types.SHUTDOWN, shutdown),
    (rpc.HEALTH, health),
]
"""``(method, [options,] handler)`` for ``server.feature``."""
