"""The ``read`` tool: text with Pi's line windows and continuation hints, and images.

Behaviour of the peer (pi-behaviour.md 2.1): lines are the text split on ``\\n`` (a trailing newline
makes one more, empty, line: that count is the "of N"), ``offset`` is 1-based, ``limit`` caps the
lines, the selection is head-truncated to 2000 lines / 50 KiB with Pi's hints (``read_window``;
valid UTF-8 is windowed on its bytes, so a big file is never decoded whole). Plus design.md
section 7: UTF-16/32 files transcoded, invalid UTF-8 flagged, binary files refused, images sent as
image blocks. Content comes through ``env.files`` (an editor buffer when the editor holds the
file); the snapshot's notices (unsaved buffer) are appended to the text block.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from pi_lsp.agent.tool import ABORTED_MESSAGE, ToolContext, ToolError, ToolResult
from pi_lsp.llm.types import ImageContent, TextContent
from pi_lsp.tools.builtin_tool import BuiltinTool
from pi_lsp.tools.file_io.file_content import binary_kind, decode_for_reading, is_valid_utf8
from pi_lsp.tools.file_io.images import SNIFF_BYTES, prepare_image, sniff_image_mime
from pi_lsp.tools.file_io.os_errors import node_style_message, os_error_code
from pi_lsp.tools.file_io.paths import resolve_read_path
from pi_lsp.tools.text.read_window import text_window, utf8_window
from pi_lsp.tools.text.truncate import format_size

READ_DESCRIPTION = (
    "Read the contents of a file. Supports text files and images (jpg, png, gif, webp). Images are "
    "sent as attachments. For text files, output is truncated to 2000 lines or 50KB (whichever is "
    "hit first). Use offset/limit for large files. When you need the full file, continue with "
    "offset until complete."
)
"""The peer's description, verbatim (``/work/peer/tool-defs.json``)."""


class ReadArgs(BaseModel):
    """Arguments of ``read`` (open object: unknown keys are ignored, as in Pi)."""

    model_config = ConfigDict(extra="ignore", defer_build=True)
    __slots__ = ("_resolved",)  # set by hand_over_resolved_path only (no cost to validation)

    path: str = Field(description="Path to the file to read (relative or absolute)")
    offset: float | None = Field(default=None, description="Line number to start reading from (1-indexed)")
    limit: float | None = Field(default=None, description="Maximum number of lines to read")

    def hand_over_resolved_path(self, cwd: Path, resolved: Path, real: str) -> None:
        """Record that :attr:`path` in ``cwd`` names ``resolved`` (:func:`resolve_read_path`'s
        answer), whose real path is ``real``, as the approval policy judged this call; the tool
        then reads that file without resolving the path again, and an editor finds its open
        document by ``real`` (issue 21). Taken once, by :meth:`take_resolved_path`."""
        object.__setattr__(self, "_resolved", (self.path, cwd, resolved, real))

    def take_resolved_path(self, cwd: Path) -> tuple[Path, str] | None:
        """``(resolved path, real path)`` handed over for this call (:meth:`hand_over_resolved_path`)
        and forget it; ``None`` when none was, or when :attr:`path` or ``cwd`` changed since."""
        try:
            path, base, resolved, real = _RESOLVED.__get__(self)
        except AttributeError:  # nothing handed over (no policy, or it did not settle the call)
            return None
        _RESOLVED.__delete__(self)
        return (resolved, real) if path == self.path and (base is cwd or base == cwd) else None


_RESOLVED = ReadArgs.__dict__["_resolved"]
"""The slot's descriptor: read and cleared without pydantic's ``__getattr__`` (issue 21)."""


def _with_notices(text: str, notices: list[str]) -> str:
    return text + "\n\n" + "\n".join(notices) if notices else text


class ReadTool(BuiltinTool):
    """``read``: the peer's read tool on top of :class:`~pi_lsp.tools.file_io.file_access.FileAccess`.

    Errors (raised as :class:`ToolError`): the peer's OS texts (``ENOENT: no such file or
    directory, access '/abs'``, ``EISDIR: illegal operation on a directory, read``), the offset
    error, and ``... is a binary file (...)`` for binary content.
    """

    name = "read"
    label = "read"
    description = READ_DESCRIPTION
    args_model = ReadArgs

    async def execute(self, args: ReadArgs, ctx: ToolContext) -> ToolResult:
        """Read ``args.path`` (see the module docstring); raise :class:`ToolError` on failure."""
        if ctx.signal.aborted:
            raise ToolError(ABORTED_MESSAGE)
        env = self.env
        handed = args.take_resolved_path(env.cwd)
        path, real = handed if handed is not None else (resolve_read_path(args.path, env.cwd), None)
        files = env.files
        try:
            await files.access(path)
        except OSError as exc:
            raise ToolError(node_style_message(exc, "access", path)) from exc
        try:
            snapshot = await files.read(path, ctx, real_path=real)
        except OSError as exc:
            if os_error_code(exc) == "EISDIR":
                raise ToolError("EISDIR: illegal operation on a directory, read") from exc
            raise ToolError(node_style_message(exc, "open", path)) from exc
        data = snapshot.data
        notices = list(snapshot.notices)
        mime = sniff_image_mime(data[:SNIFF_BYTES])
        if mime is not None:
            image = await asyncio.to_thread(prepare_image, data, mime)
            text = "\n".join([f"Read image file [{image.mime_type}]", *image.notes, *notices])
            if image.data is None:
                return ToolResult(content=[TextContent(text=text)])
            return ToolResult(
                content=[TextContent(text=text), ImageContent(data=image.data, mime_type=image.mime_type)]
            )
        kind = binary_kind(data)
        if kind is not None:
            raise ToolError(
                f"{args.path} is a binary file ({kind}, {format_size(len(data))}, {len(data)} bytes); "
                "its bytes are not shown. Use bash with a suitable tool (file, xxd, unzip -l, ...) "
                "to inspect it."
            )
        if is_valid_utf8(data):  # the common case: lines found on the bytes (issue 21)
            text, details = utf8_window(data, args.offset, args.limit, args.path)
        else:
            decoded = decode_for_reading(data)
            text, details = text_window(decoded.text, args.offset, args.limit, args.path)
            if decoded.notice is not None:
                notices.insert(0, decoded.notice)
        return ToolResult.text(_with_notices(text, notices), details)
