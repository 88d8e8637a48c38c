"""The system prompt of a pi-lsp agent run (design.md section 6, pi-behaviour.md 5.1).

The layout follows Pi's: an introduction, ``Available tools:`` with one ``- {name}: {snippet}``
line per active tool that has a one-line snippet (``(none)`` when no active tool has one; a tool
without a snippet is still active and callable, just not listed), ``Guidelines:`` (the active
tools' guidelines, deduplicated, in order), the project's context files under
``# Project Context`` (``AGENTS.md`` from the workspace root), then the date and the working
directory. The wording of the introduction and of the built-in snippets is pi-lsp's own.

The agent layer reads no files: callers pass the context files' text in.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass, field

BUILTIN_SNIPPETS: dict[str, str] = {
    "read": "Read a file (text or image)",
    "bash": "Run a shell command in the working directory",
    "edit": "Change a file by exact text replacement; several separate edits in one call",
    "write": "Create a file or replace its whole content",
    "grep": "Search file contents for a pattern (honours .gitignore)",
    "find": "Find files by glob pattern (honours .gitignore)",
    "ls": "List a directory",
}
"""One-line snippets for the built-in tools; a tool's own ``prompt_snippet`` attribute wins."""

BUILTIN_GUIDELINES: dict[str, tuple[str, ...]] = {
    "read": ("Use read to look at files rather than cat or sed.",),
    "edit": (
        "Use edit for precise changes; each edits[].oldText must match the file exactly and be unique.",
        "Put several changes to one file into one edit call with several edits[] entries.",
    ),
    "write": ("Use write only for new files or complete rewrites.",),
}
"""Guidelines per built-in tool; a tool's own ``prompt_guidelines`` attribute wins."""

INTRODUCTION = (
    "You are a coding assistant working inside the user's editor through pi-lsp. You help by "
    "reading files, running commands, editing code and writing new files. Your edits land in the "
    "editor's buffers, so the user sees them and can undo them; files the user has not saved may "
    "differ from what is on disk."
)


@dataclass
class ContextFile:
    """A project instruction file included in the prompt: ``path`` as shown, ``content`` its text."""

    path: str
    content: str


@dataclass
class PromptTool:
    """What the prompt needs to know about one active tool."""

    name: str
    snippet: str | None = None
    guidelines: Sequence[str] = field(default_factory=tuple)


def prompt_tool(tool: object) -> PromptTool:
    """Describe any tool object (``name`` attribute required) for :func:`build_system_prompt`.

    The snippet is the tool's ``prompt_snippet`` attribute, else :data:`BUILTIN_SNIPPETS`; the
    guidelines its ``prompt_guidelines`` attribute, else :data:`BUILTIN_GUIDELINES`.
    """
    name = str(getattr(tool, "name"))
    snippet = getattr(tool, "prompt_snippet", None) or BUILTIN_SNIPPETS.get(name)
    guidelines = getattr(tool, "prompt_guidelines", None)
    if guidelines is None:
        guidelines = BUILTIN_GUIDELINES.get(name, ())
    return PromptTool(name=name, snippet=snippet, guidelines=tuple(guidelines))


def build_system_prompt(
    tools: Sequence[PromptTool],
    *,
    cwd: str,
    context_files: Sequence[ContextFile] = (),
    today: datetime.date | None = None,
) -> str:
    """The system prompt for the active ``tools`` (in activation order).

    ``cwd`` is the working directory as shown (backslashes become ``/``, as in Pi); ``today``
    defaults to the local date (``YYYY-MM-DD`` in the prompt).
    """
    listed = [f"- {tool.name}: {tool.snippet}" for tool in tools if tool.snippet]
    names = {tool.name for tool in tools}
    guidelines: list[str] = []

    def add(line: str) -> None:
        line = line.strip()
        if line and line not in guidelines:
            guidelines.append(line)

    if "bash" in names and not names & {"grep", "find", "ls"}:
        add("Use bash for file operations like ls, rg and find.")
    elif "bash" in names:
        add("Prefer the grep, find and ls tools over bash to explore files (faster, honour .gitignore).")
    for tool in tools:
        for line in tool.guidelines:
            add(line)
    add("Be concise.")
    add("Show file paths clearly when working with files.")

    parts = [
        INTRODUCTION,
        "",
        "Available tools:",
        "\n".join(listed) if listed else "(none)",
        "",
        "Guidelines:",
        "\n".join(f"- {line}" for line in guidelines),
    ]
    prompt = "\n".join(parts)
    if context_files:
        prompt += "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n"
        for context in context_files:
            prompt += f"## {context.path}\n\n{context.content}\n\n"
    date = (today or datetime.date.today()).isoformat()
    prompt += f"\nCurrent date: {date}"
    prompt += f"\nCurrent working directory: {cwd.replace(chr(92), '/')}"
    return prompt
