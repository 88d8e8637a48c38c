"""Context compaction: keeping a long session inside the model's context window (Pi's compaction,
pi-coding-agent ``compaction.ts``, reduced to what pi-lsp needs).

Before each model request the loop estimates the context size (:func:`estimate_context_tokens`);
when it exceeds ``context_window - reserve_tokens`` (or the provider answered with a context
overflow), :func:`plan_compaction` decides what to do and the loop carries it out:

1. **Trim tool results first.** Tool results older than the kept tail (below) longer than
   ``tool_result_max_chars`` are cut to their head and tail with a marker
   (:func:`trim_tool_result`). When that alone brings the estimate under the limit, no summary is
   made.
2. **Summarise the older turns.** Otherwise the messages before the cut point are sent to the
   model (:func:`summary_request`: no tools, a system prompt of its own, the history serialized as
   text with long tool results cut) and replaced by one user message holding the summary
   (:func:`summary_message`); a previous summary at the start of the history is folded into the
   new one.

The **kept tail** is the most recent ``keep_recent_tokens`` (estimated) of the transcript, verbatim,
starting at a user or assistant message (never between a tool call and its result). The caller
keeps the full history elsewhere (the daemon's journal records the compaction, not a rewrite).

Token estimates are Pi's: about 4 characters per token, 1200 tokens per image. When the last
assistant reply was made on the current (post-compaction) history, its reported usage is the
size of everything up to it and only the messages after it are estimated.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pi_lsp.llm.provider import LlmContext, ToolSpec
from pi_lsp.llm.types import (
    AssistantMessage,
    ImageContent,
    Message,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
    now_ms,
)

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 1200
SUMMARY_PREFIX = "The earlier part of this conversation was compacted to save context. A summary of it:"
"""How a summary message starts (:func:`is_summary_message` recognises it)."""
TRIM_MARKER = "\n\n[... {removed} characters of this tool result were trimmed to save context ...]\n\n"

SUMMARY_SYSTEM_PROMPT = (
    "You maintain the working memory of a coding agent whose conversation no longer fits in its "
    "context window. You receive an excerpt of that conversation and write the summary the agent "
    "will continue from. Be factual and specific: exact file paths, function names, commands, "
    "error messages and decisions. Never invent anything that is not in the conversation."
)

SUMMARY_INSTRUCTIONS = """Summarise the conversation above for the agent that will continue it. \
If it begins with an earlier summary, fold that summary in. Use these sections, in Markdown:

## Goal
What the user asked for, in their words where it matters, including later changes of mind.

## Constraints and decisions
Requirements, preferences and decisions taken, with the reason when one was given.

## Changes made
What was changed so far, file by file, and what was run (tests, builds) with the outcome.

## Files that matter
Each relevant path with one line on why.

## State and next steps
Where the work stands, what is unfinished or failing, and what the agent was about to do."""


@dataclass
class CompactionSettings:
    """When and how much to compact (all sizes in tokens, estimated).

    ``context_window``: the model's window; compaction starts above ``context_window -
    reserve_tokens`` (the reserve leaves room for the reply). ``keep_recent_tokens``: how much of
    the recent conversation stays verbatim. ``tool_result_max_chars``: older tool results longer
    than this (characters) are trimmed first. ``enabled`` false turns automatic compaction off
    (a context overflow then ends the run).
    """

    context_window: int
    reserve_tokens: int = 16384
    keep_recent_tokens: int = 20000
    tool_result_max_chars: int = 2000
    enabled: bool = True

    @property
    def limit(self) -> int:
        """The largest estimated context that needs no compaction: the window minus the reserve,
        but at least half the window (a reserve meant for a large window must not make a small
        one compact on every request)."""
        return max(1, self.context_window - self.reserve_tokens, self.context_window // 2)

    @property
    def keep_tokens(self) -> int:
        """``keep_recent_tokens``, at most half of :attr:`limit` (the kept tail must leave room)."""
        return min(self.keep_recent_tokens, self.limit // 2)


def _content_chars(content: str | Sequence[Any]) -> int:
    if isinstance(content, str):
        return len(content)
    total = 0
    for block in content:
        if isinstance(block, TextContent):
            total += len(block.text)
        elif isinstance(block, ImageContent):
            total += IMAGE_TOKENS * CHARS_PER_TOKEN
        elif isinstance(block, ThinkingContent):
            total += len(block.thinking)
        elif isinstance(block, ToolCall):
            total += len(block.name) + len(json.dumps(block.arguments, ensure_ascii=False))
    return total


def estimate_tokens(message: Message) -> int:
    """Estimated tokens of one message (characters / 4, images 1200 each)."""
    return -(-_content_chars(message.content) // CHARS_PER_TOKEN)


def is_summary_message(message: Message) -> bool:
    """True for a message made by :func:`summary_message`."""
    return isinstance(message, UserMessage) and isinstance(message.content, str) and message.content.startswith(SUMMARY_PREFIX)


def estimate_context_tokens(system_prompt: str, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()) -> int:
    """Estimated tokens of a request (see the module docstring for when reported usage is used)."""
    since = max((m.timestamp for m in messages if is_summary_message(m)), default=-1)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if (
            isinstance(message, AssistantMessage)
            and message.stop_reason not in ("error", "aborted")
            and message.timestamp >= since
        ):
            usage = message.usage
            reported = usage.input + usage.cache_read + usage.cache_write + usage.output
            if reported > 0:
                return reported + sum(estimate_tokens(m) for m in messages[index + 1 :])
            break
    fixed = len(system_prompt) + sum(
        len(t.name) + len(t.description) + len(json.dumps(t.parameters)) for t in tools
    )
    return -(-fixed // CHARS_PER_TOKEN) + sum(estimate_tokens(m) for m in messages)


def find_cut_point(messages: Sequence[Message], keep_recent_tokens: int) -> int | None:
    """Index of the first kept message: walking back from the end until ``keep_recent_tokens`` are
    covered, the nearest user or assistant message at or before that point (so the tail starts a
    turn and keeps tool calls with their results). When the whole history is shorter than that,
    the latest such message. ``None`` when no index above 0 qualifies (nothing to summarise)."""
    def cuttable(i: int) -> bool:
        return isinstance(messages[i], (UserMessage, AssistantMessage)) and not is_summary_message(messages[i])

    covered = 0
    latest: int | None = None
    for index in range(len(messages) - 1, 0, -1):
        covered += estimate_tokens(messages[index])
        if cuttable(index):
            latest = latest if latest is not None else index
            if covered >= keep_recent_tokens:
                return index
    return latest


def trim_tool_result(message: ToolResultMessage, max_chars: int) -> tuple[ToolResultMessage, int]:
    """``message`` with each text block longer than ``max_chars`` cut to its head and tail around
    :data:`TRIM_MARKER` (images kept); returns the copy and how many characters were removed (0:
    the message itself is returned)."""
    removed = 0
    content: list[Any] = []
    for block in message.content:
        if isinstance(block, TextContent) and len(block.text) > max_chars:
            head = max_chars * 2 // 3
            tail = max_chars - head
            cut = len(block.text) - head - tail
            removed += cut
            content.append(TextContent(text=block.text[:head] + TRIM_MARKER.format(removed=cut) + block.text[-tail:]))
        else:
            content.append(block)
    if not removed:
        return message, 0
    return message.model_copy(update={"content": content}), removed


@dataclass
class CompactionPlan:
    """What :func:`plan_compaction` decided.

    ``messages``: the transcript with older tool results trimmed; ``cut``: index of the first kept
    message in it, ``None`` when trimming alone is enough (or nothing can be summarised);
    ``trimmed``: how many tool results were trimmed; ``tokens_after_trim``: the estimate then.
    """

    messages: list[Message]
    cut: int | None
    trimmed: int
    tokens_after_trim: int
    to_summarise: list[Message] = field(default_factory=list)


def plan_compaction(
    messages: Sequence[Message], tokens_before: int, settings: CompactionSettings, *, force: bool = False
) -> CompactionPlan:
    """Trim old tool results, then decide whether (and from where) a summary is needed; ``force``
    (after a context-overflow error, when the estimate proved wrong) summarises whenever a cut
    point exists."""
    cut = find_cut_point(messages, settings.keep_tokens)
    boundary = cut if cut is not None else 0
    out: list[Message] = []
    trimmed = removed_chars = 0
    for index, message in enumerate(messages):
        if index < boundary and isinstance(message, ToolResultMessage):
            message, removed = trim_tool_result(message, settings.tool_result_max_chars)
            if removed:
                trimmed += 1
                removed_chars += removed
        out.append(message)
    after = max(0, tokens_before - removed_chars // CHARS_PER_TOKEN)
    if cut is None or (after <= settings.limit and not force):
        return CompactionPlan(out, None, trimmed, after)
    return CompactionPlan(out, cut, trimmed, after, to_summarise=out[:cut])


def _serialize(messages: Sequence[Message], max_chars: int) -> str:
    lines: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            text = message.content if isinstance(message.content, str) else " ".join(
                b.text if isinstance(b, TextContent) else "[image]" for b in message.content)
            lines.append(f"[User]: {text}")
        elif isinstance(message, AssistantMessage):
            for block in message.content:
                if isinstance(block, TextContent) and block.text.strip():
                    lines.append(f"[Assistant]: {block.text}")
                elif isinstance(block, ToolCall):
                    lines.append(f"[Assistant tool call] {block.name} {json.dumps(block.arguments, ensure_ascii=False)}")
        else:
            text = "\n".join(b.text if isinstance(b, TextContent) else "[image]" for b in message.content)
            if len(text) > max_chars:
                text = text[: max_chars // 2] + TRIM_MARKER.format(removed=len(text) - max_chars) + text[-(max_chars // 2):]
            lines.append(f"[Tool result {message.tool_name}{' (error)' if message.is_error else ''}]: {text}")
    return "\n\n".join(lines)


def summary_request(messages: Sequence[Message], settings: CompactionSettings) -> LlmContext:
    """The request that summarises ``messages``: :data:`SUMMARY_SYSTEM_PROMPT`, no tools, one user
    message with the serialized history in ``<conversation>`` tags and
    :data:`SUMMARY_INSTRUCTIONS`. History beyond what fits in the window is dropped from the
    oldest end (after an earlier summary, which is always kept), with a note."""
    budget = max(4000, (settings.limit - 1000) * CHARS_PER_TOKEN)
    text = _serialize(messages, settings.tool_result_max_chars)
    if len(text) > budget:
        head = _serialize(messages[:1], settings.tool_result_max_chars) if messages and is_summary_message(messages[0]) else ""
        keep = max(0, budget - len(head))
        text = (head + "\n\n" if head else "") + "[... older messages left out ...]\n\n" + text[len(text) - keep :]
    prompt = f"<conversation>\n{text}\n</conversation>\n\n{SUMMARY_INSTRUCTIONS}"
    return LlmContext(system_prompt=SUMMARY_SYSTEM_PROMPT, messages=[UserMessage(content=prompt)], tools=[])


def summary_message(summary: str, timestamp: int | None = None) -> UserMessage:
    """The user message that stands for the summarised history."""
    return UserMessage(content=f"{SUMMARY_PREFIX}\n\n<summary>\n{summary.strip()}\n</summary>",
                       timestamp=timestamp if timestamp is not None else now_ms())


def summary_text(reply: AssistantMessage) -> str:
    """The summary a reply holds: its text blocks joined."""
    return "".join(b.text for b in reply.content if isinstance(b, TextContent)).strip()
