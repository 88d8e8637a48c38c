"""Plain LSP (issue 16): instruction comments as code actions, ``pi.*`` commands, work-done progress cancel.

Module-level handlers; :func:`pi_lsp.daemon.server.create_server` registers :data:`FEATURES`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from pi_lsp.daemon import command_names

if TYPE_CHECKING:
    from pi_lsp.daemon.server import PiLanguageServer

logger = logging.getLogger(__name__)


async def code_action(ls: PiLanguageServer, params: types.CodeActionParams) -> list[Any]:
    """The ``textDocument/codeAction`` handler."""
    from pi_lsp.daemon import code_actions
    from pi_lsp.daemon.comment_syntax import syntax_for

    document = ls.require_host().store.by_uri(params.text_document.uri)
    if document is None:
        return []
    syntax = syntax_for(ls.plain.language_ids.get(document.uri), str(document.path or document.uri))
    literals = _code_action_literals(ls.client_capabilities)
    only = list(params.context.only) if params.context.only else None
    actions: list[Any] = code_actions.code_actions(
        document.uri, code_actions.split_lines(document.text), params.range, syntax,
        literal_support=literals, only=only, running=ls.plain.running,
    )
    if params.context.trigger_kind == types.CodeActionTriggerKind.Automatic:
        return actions  # a lightbulb on every cursor move: the change set is not worth reading
    return actions + await ls.plain.change_actions(document.uri, params.range, literal_support=literals, only=only)


def progress_cancel(ls: PiLanguageServer, params: types.WorkDoneProgressCancelParams) -> None:
    """The ``window/workDoneProgress/cancel`` handler."""
    if not ls.plain.cancel_progress(params.token):
        logger.info("window/workDoneProgress/cancel: no run owns token %r", params.token)


def command_handler(name: str) -> Any:
    """The ``workspace/executeCommand`` handler of ``pi.*`` command ``name``: the run it starts
    waits until the command's reply is written (eglot waits for it synchronously)."""
    # pygls evaluates a command's annotations at run time: the server's class (imported here only
    # for type checking, as the server module imports this one) cannot appear in them
    async def command(ls: LanguageServer, *arguments: Any) -> Any:
        ls.require_host()
        msg_id = ls.protocol.msg_id
        replied = ls.protocol.reply_sent(msg_id) if msg_id is not None else None
        return await ls.plain.execute(name, list(arguments), replied)

    return command


def _code_action_literals(caps: types.ClientCapabilities | None) -> bool:
    action = caps.text_document.code_action if caps is not None and caps.text_document is not None else None
    return bool(action is not None and action.code_action_literal_support is not None)


CODE_ACTION_OPTIONS = types.CodeActionOptions(
    code_action_kinds=[command_names.KIND_RUN, command_names.KIND_ABORT, command_names.KIND_REVERT],
    resolve_provider=False,
)

FEATURES: list[tuple[Any, ...]] = [
    (types.TEXT_DOCUMENT_CODE_ACTION, CODE_ACTION_OPTIONS, code_action),
    (types.WINDOW_WORK_DONE_PROGRESS_CANCEL, progress_cancel),
]
"""``(method, [options,] handler)`` for ``server.feature``."""

COMMANDS: list[str] = [*command_names.INSTRUCTION_COMMANDS, *command_names.REVERT_COMMANDS]
"""The ``pi.*`` commands of ``workspace/executeCommand`` (each gets :func:`command_handler`)."""
