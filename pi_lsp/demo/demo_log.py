"""The live log and the final diff of ``pi-lsp demo``.

:class:`DemoLog` prints what the fake editor receives as it arrives: ``pi/event`` notifications
(assistant text streamed from ``message_update`` deltas, tool calls with arguments, tool results
summarised), each ``workspace/applyEdit`` (named so, with its label, range count and document
version) and each ``pi/saveDocuments``. :class:`LiveList` is how it hooks in: FakeEditor records
what the server sends by appending to lists, so the demo swaps those lists for ones that also call
the log. :func:`project_diff` is the unified diff of the project against the original sample.
"""

from __future__ import annotations

import os
import signal

import asyncio
import difflib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

ARGS_CHARS = 300
"""Tool-call arguments longer than this (as compact JSON) are cut in the log."""

RESULT_LINES = 4
"""Result summaries show at most this many lines."""


class LiveList(list):  # type: ignore[type-arg]
    """A list that calls ``on_append(item)`` after each append."""

    def __init__(self, on_append: Callable[[Any], None]) -> None:
        super().__init__()
        self._on_append = on_append

    def append(self, item: Any) -> None:
        """Append, then report the item to the callback."""
        super().append(item)
        self._on_append(item)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _result_text(result: Any) -> str:
    blocks = result.get("content", []) if isinstance(result, dict) else []
    return "".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


class DemoLog:
    """Prints the demo's live log to ``out`` (flushed per line). ``project`` is the root folder,
    used to show paths relative to it."""

    def __init__(self, out: TextIO, project: Path) -> None:
        self.out = out
        self.project = project
        self._in_text = False
        self.tool_calls = 0
        self.applied_edits = 0
        self.saves = 0
        self.approval_answer: str | None = None
        self._closed = False

    def line(self, text: str) -> None:
        """Print one line (ending an assistant text in progress first)."""
        self.finish_text()
        self._write(text + "\n")

    def finish_text(self) -> None:
        """End the assistant text being streamed, if any."""
        if self._in_text:
            self._write("\n")
            self._in_text = False

    def _write(self, text: str) -> None:
        """Write and flush; when the reader is gone (``| head``), stop writing and end the demo
        as SIGPIPE would end a command line tool (the demo's handler cleans up and exits 141)."""
        if self._closed:
            return
        try:
            self.out.write(text)
            self.out.flush()
        except BrokenPipeError:
            self._closed = True
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.out.fileno())  # nothing more to flush at exit
            os.close(devnull)
            os.kill(os.getpid(), signal.SIGPIPE)

    def _relative(self, uri: str) -> str:
        prefix = self.project.resolve().as_uri() + "/"
        return uri[len(prefix):] if uri.startswith(prefix) else uri

    def event(self, params: Any) -> None:
        """A ``pi/event`` notification's params: ``{sessionId, event}``."""
        event = params.get("event") if isinstance(params, dict) else None
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        if kind == "message_update":
            delta = event.get("delta") or {}
            if delta.get("type") == "text" and delta.get("text"):
                if not self._in_text:
                    self.out.write("assistant: ")
                    self._in_text = True
                self.out.write(delta["text"])
                self.out.flush()
        elif kind == "message_end":
            self.finish_text()
        elif kind == "tool_execution_start":
            self.tool_calls += 1
            args = json.dumps(event.get("args"), ensure_ascii=False, separators=(", ", ": "))
            self.line(f"tool call {event.get('toolName')} {_cut(args, ARGS_CHARS)}")
        elif kind == "tool_execution_end":
            text = _result_text(event.get("result")).rstrip("\n")
            lines = text.splitlines() or ["(no output)"]
            status = "error" if event.get("isError") else "ok"
            shown = [_cut(line, 160) for line in lines[:RESULT_LINES]]
            if len(lines) > RESULT_LINES:
                shown.append(f"… {len(lines) - RESULT_LINES} more lines")
            self.line(f"  result of {event.get('toolName')} ({status}):")
            for line in shown:
                self.line(f"    {line}")
        elif kind == "approval_requested":
            answer = f"; the user answers {self.approval_answer!r}" if self.approval_answer else ""
            self.line(f"  approval asked (window/showMessageRequest): {event.get('scope')}{answer}")
        elif kind == "agent_end":
            self.line(f"agent_end: stopReason {event.get('stopReason')}")

    def apply_edit(self, params: Any) -> None:
        """A ``workspace/applyEdit`` request's params (camelCase dict)."""
        self.applied_edits += 1
        edit = params.get("edit") or {}
        parts: list[str] = []
        for change in edit.get("documentChanges") or []:
            doc = change.get("textDocument") or {}
            parts.append(
                f"{self._relative(doc.get('uri', '?'))} version {doc.get('version')}: "
                f"{len(change.get('edits') or [])} range(s)"
            )
        for uri, edits in (edit.get("changes") or {}).items():
            parts.append(f"{self._relative(uri)}: {len(edits)} range(s)")
        self.line(f"  workspace/applyEdit \"{params.get('label')}\": " + "; ".join(parts))

    def save(self, params: Any, editor: Any) -> None:
        """A ``pi/saveDocuments`` request's params; the outcome is printed once the editor saved."""
        self.saves += 1
        documents = (params or {}).get("documents") or []
        names = ", ".join(f"{self._relative(d.get('uri', '?'))} (version {d.get('version')})" for d in documents)
        self.line(f"  pi/saveDocuments {names}")

        def report() -> None:
            for document in documents:
                buffer = editor.buffers.get(document.get("uri"))
                saved = buffer is None or not buffer.modified
                self.line(f"    {'saved to disk' if saved else 'not saved'}: {self._relative(document.get('uri', '?'))}")

        asyncio.get_running_loop().call_soon(report)


def _files(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def project_diff(original: Path, project: Path, unsaved: Mapping[str, str]) -> str:
    """A unified diff of ``project`` against ``original``: disk text, except for the relative
    paths in ``unsaved`` (the editor's unsaved buffers), whose buffer text counts and whose
    ``+++`` header says so. Files are compared in path order; unchanged files are left out."""
    chunks: list[str] = []
    for rel in sorted(_files(original) | _files(project) | set(unsaved)):
        before = _read(original / rel) if (original / rel).exists() else ""
        after = unsaved[rel] if rel in unsaved else _read(project / rel)
        if before == after:
            continue
        label = f"b/{rel}" + (" (unsaved editor buffer)" if rel in unsaved else "")
        chunks.extend(
            difflib.unified_diff(
                before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{rel}", label
            )
        )
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in chunks)
    return text.rstrip("\n") or "(no changes)"
