"""The ``edit`` tool: exact text replacement in one file (Pi's ``edit``, pi-behaviour.md 2.3).

The model sends ``{path, edits: [{oldText, newText}, ...]}``. Every ``oldText`` is matched against
the original file (Pi's rules, :mod:`pi_lsp.tools.text.edit_match`); the replacements are spliced into
the original text so untouched bytes stay identical (:mod:`pi_lsp.tools.file_io.line_endings`); the new
bytes go out through the session's :class:`~pi_lsp.tools.file_io.file_access.FileAccess` (the disk, or the
editor as ``workspace/applyEdit``). The result text and every error text are the peer's.

Differences from the peer 0.73.1 (design.md section 7): byte-faithful splicing (BOM, each line's
ending, lone CRs kept; the peer rewrites every line ending), a file that is not valid UTF-8 is
refused, fuzzy matches rewrite only the touched lines (Pi 0.83), and ``details`` carries
``{diff, patch, firstChangedLine}``.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pi_lsp.agent.tool import ABORTED_MESSAGE, ToolContext, ToolError, ToolResult
from pi_lsp.tools.builtin_tool import BuiltinTool
from pi_lsp.tools.text.edit_diff import edit_diff
from pi_lsp.tools.text.edit_match import EditSpec, apply_splices, plan_edits
from pi_lsp.tools.file_io.file_access import FileSnapshot, WriteReport
from pi_lsp.tools.file_io.line_endings import LineEndingView, NotUtf8Error, decode_text, encode_text
from pi_lsp.tools.file_io.mutation_queue import file_mutation_lock, mutation_key
from pi_lsp.tools.file_io.os_errors import node_style_message, os_error_code
from pi_lsp.tools.file_io.paths import NulInPathError, display_path, resolve_to_cwd

DESCRIPTION = (
    "Edit a single file using exact text replacement. Every edits[].oldText must match a unique, "
    "non-overlapping region of the original file. If two changes affect the same block or nearby lines, "
    "merge them into one edit instead of emitting overlapping edits. Do not include large unchanged "
    "regions just to connect distant changes."
)
"""The peer's model-facing description, verbatim."""


class EditItem(BaseModel):
    """One replacement ``{oldText, newText}``; closed (extra keys are a validation error, as in 0.73.1)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    oldText: str = Field(
        description=(
            "Exact text for one targeted replacement. It must be unique in the original file and must not "
            "overlap with any other edits[].oldText in the same call."
        )
    )
    newText: str = Field(description="Replacement text for this targeted edit.")


class EditArgs(BaseModel):
    """``{path, edits}``; closed like the peer's schema. ``path`` is relative to the session cwd or
    absolute (Pi's path rules); ``edits`` may be empty here (execution rejects it, as Pi does)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    path: str = Field(description="Path to the file to edit (relative or absolute)")
    edits: list[EditItem] = Field(
        description=(
            "One or more targeted replacements. Each edit is matched against the original file, not "
            "incrementally. Do not include overlapping or nested edits. If two changes touch the same block "
            "or nearby lines, merge them into one edit instead."
        )
    )


def prepare_edit_arguments(raw: Any) -> Any:
    """Pi's compatibility shim, run before validation (pi-behaviour.md 2.3).

    - not a dict: returned unchanged (validation then fails);
    - ``edits`` given as a string that parses as a JSON array: replaced by the array, in place on
      ``raw`` (as Pi does); any other string is left alone;
    - legacy top-level ``oldText`` and ``newText`` (both strings): a new dict without them whose
      ``edits`` is the existing list (copied) or ``[]`` with ``{oldText, newText}`` appended;
    - otherwise ``raw`` itself is returned (valid input passes through as the same object).
    """
    if not isinstance(raw, dict):
        return raw
    edits = raw.get("edits")
    if isinstance(edits, str):
        try:
            parsed = json.loads(edits)
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            raw["edits"] = parsed
    old, new = raw.get("oldText"), raw.get("newText")
    if not isinstance(old, str) or not isinstance(new, str):
        return raw
    existing = raw.get("edits")
    folded = list(existing) if isinstance(existing, list) else []
    folded.append({"oldText": old, "newText": new})
    rest = {key: value for key, value in raw.items() if key not in ("oldText", "newText")}
    rest["edits"] = folded
    return rest


def _access_error(path: str, exc: OSError) -> ToolError:
    code = os_error_code(exc)
    reason = f"Error code: {code}" if code else f"Error: {exc.strerror or exc}"
    return ToolError(f"Could not edit file: {path}. {reason}.")


class EditTool(BuiltinTool):
    """The ``edit`` tool of one session (implements :class:`pi_lsp.agent.tool.Tool`).

    ``execute`` raises :class:`ToolError` with the peer's texts: no edits; ``Could not edit file:
    {path}. Error code: {CODE}.`` when the file cannot be read and written (``ENOENT``,
    ``EACCES``, ``ELOOP`` ...); a directory (``EISDIR: illegal operation on a directory, read``);
    the matching errors of :func:`~pi_lsp.tools.text.edit_match.plan_edits`; a file that is not UTF-8
    (pi-lsp's own text); and whatever the ``FileAccess`` write raises (an editor that refused).
    All of it happens inside the file's mutation lock, held until the write returned.
    """

    name = "edit"
    label = "edit"
    description = DESCRIPTION
    args_model = EditArgs

    def prepare_arguments(self, raw: Any) -> Any:
        """See :func:`prepare_edit_arguments`."""
        return prepare_edit_arguments(raw)

    async def execute(self, args: EditArgs, ctx: ToolContext) -> ToolResult:
        """Apply ``args.edits`` to ``args.path``; see the class docstring for failures."""
        if not args.edits:
            raise ToolError("Edit tool input is invalid. edits must contain at least one replacement.")
        path = args.path
        try:
            absolute = resolve_to_cwd(path, self.env.cwd)
        except NulInPathError:  # Pi's edit reports the fs error's code
            raise ToolError(f"Could not edit file: {path}. Error code: ERR_INVALID_ARG_VALUE.") from None
        specs = [EditSpec(item.oldText, item.newText) for item in args.edits]
        try:
            mutation_key(absolute)
        except OSError as exc:  # the real path cannot be computed (a symlink loop): Pi's access error
            raise _access_error(path, exc) from None
        async with file_mutation_lock(absolute):
            return await self._edit_locked(path, absolute, specs, ctx)

    async def _edit_locked(self, path: str, absolute: Path, specs: list[EditSpec], ctx: ToolContext) -> ToolResult:
        files = self.env.files
        try:
            await files.access(absolute, write=True)
        except OSError as exc:
            raise _access_error(path, exc) from None
        try:
            snapshot = await files.read(absolute, ctx)
        except OSError as exc:
            if os_error_code(exc) == "EISDIR":  # Node: the read of an opened directory, no path
                raise ToolError(node_style_message(OSError(exc.errno, exc.strerror), "read")) from None
            raise ToolError(node_style_message(exc, "open")) from None
        try:
            has_bom, text = decode_text(snapshot.data)
        except NotUtf8Error as exc:
            raise ToolError(
                f"Could not edit file: {path}. It is not valid UTF-8 text (invalid byte at offset {exc.offset}); "
                "the file was left unchanged. Use bash to change files in other encodings."
            ) from None
        view = LineEndingView(text)
        splices = plan_edits(view.lf, specs, path)
        new_text = view.splice(splices)
        new_bytes = encode_text(has_bom, new_text)
        new_lf = new_text if view.lf is view.original else apply_splices(view.lf, splices)
        label = f"pi: edit {display_path(absolute, self.env.cwd)}"
        report = await self._write(absolute, new_bytes, snapshot, label, ctx, path, len(specs))
        if report.landed is not None:  # the user's review kept part of it: show what landed
            new_lf = LineEndingView(decode_text(report.landed)[1]).lf
        details = edit_diff(path, view.lf, new_lf)  # after the write: the editor gets the edit sooner
        message = f"Successfully replaced {len(specs)} block(s) in {path}."
        for notice in report.notices:
            message += "\n" + notice
        return ToolResult.text(message, details=details.to_details())

    async def _write(
        self, absolute: Path, data: bytes, snapshot: FileSnapshot, label: str, ctx: ToolContext, path: str, count: int
    ) -> WriteReport:
        """Write through the seam; a cancel arriving meanwhile waits for the write, then says what happened."""
        write = asyncio.ensure_future(
            self.env.files.write(absolute, data, previous=snapshot, label=label, ctx=ctx)
        )
        try:
            return await asyncio.shield(write)
        except OSError as exc:
            raise ToolError(node_style_message(exc, "open")) from None
        except asyncio.CancelledError:
            try:
                await write
            except Exception as exc:  # the write failed on its own: nothing was changed
                if isinstance(exc, ToolError):
                    reason = exc.message
                elif isinstance(exc, OSError):
                    reason = node_style_message(exc, "open")
                else:
                    reason = str(exc)
                raise ToolError(f"{ABORTED_MESSAGE}. The edit was not applied: {reason}") from None
            raise ToolError(
                f"{ABORTED_MESSAGE} after the edit was written: Successfully replaced {count} block(s) in {path}."
            ) from None
