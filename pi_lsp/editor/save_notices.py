"""The notices an editor edit's result ends with when the edit was applied but not saved.

Design.md section 4 step 6: after an edit lands in the editor's buffer pi-lsp asks the editor to
save it, except where saving would write the user's own unsaved typing or the editor cannot save
for it; a save that fails is never an error. Each case tells the model, in one bracketed line,
why the file on disk may differ from the buffer. Shared by the single-file edit
(:mod:`pi_lsp.editor.edit_session`) and the several-file one (a rename,
:mod:`pi_lsp.editor.workspace_edit_session`), so both say the same. ``path`` is the file as the
edit request names it.
"""

from __future__ import annotations

from pathlib import Path


def user_changes_too(path: Path) -> str:
    """The buffer changed beyond the agent's edit meanwhile (the user typed): saving would write it."""
    return f"[Not saved: the editor's buffer of {path} also holds the user's changes.]"


def was_dirty(path: Path) -> str:
    """The buffer had unsaved changes by the user before the edit: it stays unsaved."""
    return f"[Not saved: the editor's buffer of {path} had unsaved changes by the user; it stays unsaved.]"


def cannot_save(path: Path) -> str:
    """The client does not offer ``pi/saveDocuments`` (``experimental.pi.saveDocuments``)."""
    return f"[Applied in the editor and not saved: {path} on disk is unchanged until the editor saves it.]"


def not_confirmed(path: Path, what: str = "edit") -> str:
    """No ``didChange`` confirmed the edit (``what``: ``edit``, or ``change`` for one file of several),
    so there is no version to save."""
    return f"[Not saved: the editor has not confirmed the {what} of {path} yet.]"


def save_timed_out(path: Path) -> str:
    """``pi/saveDocuments`` got no answer within the apply timeout."""
    return f"[Not saved: the editor did not answer the save of {path} in time.]"


def save_failed(path: Path, problem: object) -> str:
    """``pi/saveDocuments`` failed (an error reply, a closed connection: ``problem``)."""
    return f"[Not saved: the editor failed to save {path}: {problem}.]"


def save_skipped(path: Path, reason: str) -> str:
    """The editor answered that it skipped this file, for ``reason``."""
    return f"[Not saved: {reason}. The change is in the editor's buffer of {path} only.]"


def save_unreported(path: Path) -> str:
    """The editor's answer names the file neither as saved nor as skipped."""
    return f"[Not saved: the editor did not report saving {path}; the change is in its buffer only.]"
