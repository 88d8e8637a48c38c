"""``rename``: the editor's language server renames a symbol everywhere, as ONE change through the editor.

The server's ``WorkspaceEdit`` (``changes`` or ``documentChanges``; file creations, renames and
deletions are refused) is turned into the new text of every file it touches, computed against the
text each file has now (editor buffer or disk). The named file must still hold the text the
symbol was found in (else it moved on while the server worked: refused). The versions inside the
server's edit are not compared with pi-lsp's: they are the server's numbering, which equals the
editor's only when the editor shares its version numbers with its servers (Emacs's pi-lsp.el and
eglot count separately). Every file is then policed as an edit of that file (the named one by the
pipeline's policy hook, the others through ``env.approve_writes``: protected refused, outside the
workspace asked), locked, and changed through ``env.files.write_files``: in the daemon ONE
versioned ``workspace/applyEdit`` with a ``ChangeAnnotation`` ("Rename a to b"), one undo step per
file, saved per the save contract, journaled per file (``pi/changes``).

The result names each file and how many places changed in it (occurrences of the old name that are
gone; a server that rewrites whole files still counts the renamed places). With
``pi.edit.review: before`` the user reviews the rename first (``ReviewingFileAccess.write_files``):
the counts are those of what landed, and notices name the hunks the user rejected.
"""

from __future__ import annotations

import re
from contextlib import AsyncExitStack
from typing import Any

from pydantic import Field

from pi_lsp.agent.tool import ABORTED_MESSAGE, ToolContext, ToolError, ToolResult
from pi_lsp.tools.file_io.file_access import FileWrite, WriteReport
from pi_lsp.tools.file_io.mutation_queue import file_mutation_lock, mutation_key
from pi_lsp.tools.language.language_tool import UTF8_BOM, LanguageTool, SymbolArgs, position_params

RENAME_DESCRIPTION = (
    "Rename a symbol everywhere it is used (all files), using the editor's language server: safer than editing "
    "each use by hand. Give the file, the 1-indexed line where the symbol appears, the symbol's exact text on "
    "that line (occurrence picks among several on the line) and the new name. The change lands in the editor "
    "as one undoable edit per file and is saved."
)


class RenameArgs(SymbolArgs):
    """``{path, line, symbol, newName, occurrence?}`` (open object)."""

    newName: str = Field(description="The new name for the symbol")


def workspace_edit_files(edit: Any) -> list[tuple[str, int | None, list[dict[str, Any]]]]:
    """``(uri, version or None, text edits)`` per file of a ``WorkspaceEdit`` (JSON), in order,
    the edits of a URI named twice merged. Raises ``ValueError`` for resource operations
    (create, rename, delete) and malformed parts."""
    if not isinstance(edit, dict):
        raise ValueError("the language server's answer is not a WorkspaceEdit")
    files: dict[str, tuple[int | None, list[dict[str, Any]]]] = {}
    for change in edit.get("documentChanges") or []:
        if not isinstance(change, dict) or "kind" in change:
            kind = change.get("kind") if isinstance(change, dict) else "unknown"
            raise ValueError(f"the rename also wants to {kind} a file, which pi-lsp does not do")
        document = change.get("textDocument") or {}
        uri, version = document.get("uri"), document.get("version")
        if not isinstance(uri, str):
            raise ValueError("a TextDocumentEdit without a document URI")
        known = files.get(uri, (None, []))
        files[uri] = (version if isinstance(version, int) else known[0], known[1] + list(change.get("edits") or []))
    if not edit.get("documentChanges"):
        for uri, edits in (edit.get("changes") or {}).items():
            known = files.get(uri, (None, []))
            files[uri] = (known[0], known[1] + list(edits or []))
    return [(uri, version, edits) for uri, (version, edits) in files.items()]


def renamed_places(old_text: str, new_text: str, symbol: str, edits: int) -> int:
    """How many places a rename changed in one file: the whole-word occurrences of ``symbol`` that
    are gone, or the server's edit count when that says nothing (not an identifier, none gone)."""
    if re.fullmatch(r"\w+", symbol):
        pattern = re.compile(rf"(?<!\w){re.escape(symbol)}(?!\w)")
        gone = len(pattern.findall(old_text)) - len(pattern.findall(new_text))
        if gone > 0:
            return gone
    return edits


def landed_count(write: FileWrite, report: WriteReport, planned: int, symbol: str) -> int:
    """``planned`` places, or, when a review kept only part of the change (``report.landed``),
    the places renamed in what landed (0 when nothing did)."""
    if report.landed is None or report.landed == write.data:
        return planned
    if report.landed == write.previous.data:
        return 0
    def text(data: bytes) -> str:
        return data[len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0:].decode("utf-8", "replace")
    return min(planned, renamed_places(text(write.previous.data), text(report.landed), symbol, planned))


class RenameTool(LanguageTool):
    """``rename``: ``textDocument/rename`` applied through the editor (module docstring)."""

    name = "rename"
    label = "rename"
    description = RENAME_DESCRIPTION
    args_model = RenameArgs
    method = "textDocument/rename"
    prompt_snippet = "Rename a symbol everywhere it is used, through the editor (one undoable change per file)"
    execution_mode = "sequential"

    async def execute(self, args: RenameArgs, ctx: ToolContext) -> ToolResult:
        """Rename, apply, save; the files and counts, or a ToolError saying what to try."""
        if not args.newName.strip():
            raise ToolError("newName must not be empty.")
        asked_text = await self.text_of(self.resolve(args.path))
        path, uri, position = await self.locate(args)
        answer = await self.ask(self.method, {**position_params(uri, position), "newName": args.newName}, path)
        if not answer.result:
            raise ToolError(
                f"The language server returned no rename for `{args.symbol}` ({self.shown(path)}:{args.line}); "
                "it may not be a name it can rename there. Nothing was changed."
            )
        try:
            files = workspace_edit_files(answer.result)
        except ValueError as exc:
            raise ToolError(f"The rename was not applied: {exc}. Nothing was changed.") from None
        if await self.text_of(path) != asked_text:
            raise ToolError(
                f"{self.shown(path)} changed while the language server computed the rename. Nothing was changed; retry."
            )
        writes, counts = await self._plan(files, args.symbol)
        if not writes:
            return ToolResult.text(f"Nothing to rename: `{args.symbol}` is already `{args.newName}` everywhere.")
        named = mutation_key(path)
        others = [w.path for w in writes if mutation_key(w.path) != named]
        if others and self.env.approve_writes is not None:
            refusal = await self.env.approve_writes(self.name, others, ctx)
            if refusal is not None:
                raise ToolError(f"{refusal} Nothing was renamed.")
        if ctx.signal.aborted:
            raise ToolError(ABORTED_MESSAGE)
        label = f"pi: rename {args.symbol} to {args.newName}"
        annotation = f"Rename {args.symbol} to {args.newName}"
        async with AsyncExitStack() as stack:
            for key in sorted({mutation_key(w.path) for w in writes}):
                await stack.enter_async_context(file_mutation_lock(key))
            reports = await self._write(writes, label, annotation, ctx)
        partial = any(r.landed is not None and r.landed != w.data for w, r in zip(writes, reports))
        counts = [landed_count(w, r, c, args.symbol) for w, r, c in zip(writes, reports, counts)]
        changed = sum(1 for count in counts if count)
        lines = [
            f"Renamed `{args.symbol}` to `{args.newName}`: {sum(counts)} place{'s' if sum(counts) != 1 else ''} "
            f"in {changed} file{'s' if changed != 1 else ''}"
            + (" (only what the user accepted; the rest still uses the old name, see below)." if partial else ".")
        ]
        for write, count, report in zip(writes, counts, reports):
            lines.append(f"{self.shown(write.path)}: {count}")
            lines.extend(report.notices)
        details = {"files": [{"path": self.shown(w.path), "count": c} for w, c in zip(writes, counts)]}
        return ToolResult.text("\n".join(lines), details=details)

    async def _plan(self, files: list[tuple[str, int | None, list[dict[str, Any]]]], symbol: str) -> tuple[list[FileWrite], list[int]]:
        """The new bytes of every file the edit changes (unchanged files left out) and its count."""
        knowledge = self.knowledge()
        writes: list[FileWrite] = []
        counts: list[int] = []
        for uri, version, edits in files:
            path = knowledge.path_of(uri)
            if path is None:
                raise ToolError(f"The rename touches {uri}, which is not a file. Nothing was changed.")
            snapshot = await self.snapshot(path)
            bom = snapshot.data.startswith(UTF8_BOM)
            try:
                old_text = snapshot.data[len(UTF8_BOM) if bom else 0:].decode("utf-8")
                new_text = knowledge.apply_text_edits(old_text, edits)
            except (UnicodeDecodeError, ValueError) as exc:
                raise ToolError(f"The rename's edits of {self.shown(path)} cannot be applied: {exc}. Nothing was changed.") from None
            if new_text == old_text:
                continue
            data = (UTF8_BOM if bom else b"") + new_text.encode("utf-8", "surrogatepass")
            writes.append(FileWrite(path=path, data=data, previous=snapshot))
            counts.append(renamed_places(old_text, new_text, symbol, len(edits)))
        return writes, counts

    async def _write(self, writes: list[FileWrite], label: str, annotation: str, ctx: ToolContext) -> list[WriteReport]:
        files = self.env.files
        write_files = getattr(files, "write_files", None)
        try:
            if write_files is not None:
                return await write_files(writes, label=label, annotation=annotation, ctx=ctx)
            return [await files.write(w.path, w.data, previous=w.previous, label=label, ctx=ctx) for w in writes]
        except OSError as exc:
            raise ToolError(f"The rename could not be written: {exc}") from None
