"""The names plain LSP clients see (issue 16): ``pi.*`` commands and ``refactor.pi.*`` code action kinds.

The ``initialize`` reply advertises them (``executeCommandProvider``, ``codeActionProvider``), so
they live apart from the code that computes the actions (:mod:`pi_lsp.daemon.code_actions`,
:mod:`pi_lsp.daemon.change_actions`), which loads with the session (issue 21).
"""

from __future__ import annotations

RUN_INSTRUCTION = "pi.runInstruction"
PROMPT = "pi.prompt"
ABORT = "pi.abort"
INSTRUCTION_COMMANDS = (RUN_INSTRUCTION, PROMPT, ABORT)
"""The commands of instruction comments (:mod:`pi_lsp.daemon.code_actions`)."""

REVERT_HUNK = "pi.revertHunk"
REVERT_TURN = "pi.revertTurn"
REVERT_COMMANDS = (REVERT_HUNK, REVERT_TURN)
"""The commands of the change journal's actions (:mod:`pi_lsp.daemon.change_actions`)."""

KIND_RUN = "refactor.pi.run"
KIND_ABORT = "refactor.pi.abort"
KIND_REVERT = "refactor.pi.revert"
