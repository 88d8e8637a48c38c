"""The ``write`` tool: create or overwrite a file (pi-behaviour.md 2.4, design.md section 7).

The whole operation holds the file's mutation lock (:mod:`.mutation_queue`). Bytes go through
``env.files`` (the editor for a file it holds, else a safe disk write). Unlike the peer, which
counts UTF-16 code units, the message reports the real UTF-8 byte count.
"""

from __future__ import annotations


from pydantic import BaseModel, ConfigDict, Field

from pi_lsp.agent.tool import ABORTED_MESSAGE, ToolContext, ToolError, ToolResult
from pi_lsp.tools.builtin_tool import BuiltinTool
from pi_lsp.tools.file_io.mutation_queue import file_mutation_lock, finish_despite_cancel
from pi_lsp.tools.file_io.os_errors import node_style_message
from pi_lsp.tools.file_io.paths import display_path, resolve_to_cwd

WRITE_DESCRIPTION = (
    "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. "
    "Automatically creates parent directories."
)
"""The peer's description, verbatim (``/work/peer/tool-defs.json``)."""


class WriteArgs(BaseModel):
    """Arguments of ``write`` (open object: unknown keys are ignored, as in Pi)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    path: str = Field(description="Path to the file to write (relative or absolute)")
    content: str = Field(description="Content to write to the file")


def utf8_bytes(text: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (possible from JSON ``"\\ud800"``) becomes U+FFFD, as
    Node writes it."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        repaired = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        return repaired.encode("utf-8")


class WriteTool(BuiltinTool):
    """``write``: replace a file's content with ``content`` encoded as UTF-8 (no BOM or EOL rules).

    Result text: ``Successfully wrote {N} bytes to {path}`` (``N`` = UTF-8 bytes, ``path`` as the
    model gave it), then each :class:`~pi_lsp.tools.file_io.file_access.WriteReport` notice on its own line;
    ``details`` is ``None``. Errors are raised as :class:`ToolError` in Node's words
    (``EISDIR: illegal operation on a directory, open '/abs/dir'``). Abort (pi-behaviour.md 1.5): a
    cancellation while the bytes are being written waits for the write to finish, keeps the lock
    until then, and is reported as ``Operation aborted``.
    """

    name = "write"
    label = "write"
    description = WRITE_DESCRIPTION
    args_model = WriteArgs

    async def execute(self, args: WriteArgs, ctx: ToolContext) -> ToolResult:
        """Write ``args.content`` to ``args.path``; raise :class:`ToolError` on failure."""
        if ctx.signal.aborted:
            raise ToolError(ABORTED_MESSAGE)
        path = resolve_to_cwd(args.path, self.env.cwd)
        data = utf8_bytes(args.content)
        label = f"pi: write {display_path(path, self.env.cwd)}"
        try:
            async with file_mutation_lock(path):
                report = await finish_despite_cancel(
                    self.env.files.write(path, data, previous=None, label=label, ctx=ctx)
                )
        except OSError as exc:
            raise ToolError(node_style_message(exc, "open")) from exc
        if ctx.signal.aborted:
            raise ToolError(ABORTED_MESSAGE)
        lines = [f"Successfully wrote {len(data)} bytes to {args.path}", *report.notices]
        return ToolResult.text("\n".join(lines))
