"""The provider contract: what the agent loop sends to a model and how the reply comes back.

The loop builds an :class:`LlmContext` (system prompt, transcript, active tools) and iterates
``provider.stream(context, cancel=...)``. The stream **never raises** for provider failures: HTTP
errors, timeouts, refused connections, broken streams and aborts all end the stream with one
:class:`~pi_lsp.llm.events.DoneEvent` whose message has ``stop_reason`` ``"error"`` (and
``error_message``) or ``"aborted"`` (design.md section 6, pi-behaviour.md 4.2). Only the
cancellation of the consuming task itself propagates.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from pi_lsp.llm.events import StreamEvent
from pi_lsp.llm.types import Message


@dataclass
class ToolSpec:
    """A tool as the model sees it: ``name``, ``description`` and the JSON Schema ``parameters``
    (already inlined: no ``$ref``; design.md section 2)."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class LlmContext:
    """One request: the system prompt, the transcript (oldest first) and the tools offered."""

    system_prompt: str
    messages: list[Message] = field(default_factory=list)
    tools: list[ToolSpec] = field(default_factory=list)


class ProviderSettings(BaseModel):
    """Where and how to reach the model's endpoint (OpenAI-compatible chat completions or
    Anthropic's Messages API; the provider class decides the wire format).

    Field names are snake_case in Python and camelCase in settings (``baseUrl``, ``apiKeyEnv``,
    ``maxRetries`` ...). All durations are in seconds (floats allowed, so tests set them small).

    - ``base_url``: the API root, e.g. ``http://127.0.0.1:8080/v1``; ``/chat/completions`` (or
      ``/messages``) is appended.
    - ``model``: the model id sent as ``model``.
    - ``api_key_env``: the NAME of the environment variable holding the API key. The key itself is
      never a setting, never logged, never put in an error message. ``None`` sends no key (local
      servers); a name whose variable is unset or empty is an error result.
    - ``max_retries``: extra attempts after the first for 429, 5xx and connection failures that
      happen before the response starts streaming (0 disables retrying).
    - ``backoff_initial_seconds`` doubling up to ``backoff_max_seconds``: the wait between attempts
      when the server gives no ``Retry-After``.
    - ``retry_after_max_seconds``: the longest ``Retry-After`` honoured; a longer one ends the
      request with an error that names the wait instead of sleeping that long.
    - ``connect_timeout_seconds``; ``read_timeout_seconds`` (the longest silence between two
      received chunks, so a stalled stream fails instead of hanging); ``progress_timeout_seconds``
      (the longest time a streaming response may go without progress, a delta or the finish,
      whatever else the server sends: keep-alive comments reset only the read timeout).
    - ``max_tokens``, ``temperature``: sent only when set (Anthropic's Messages API requires
      ``max_tokens``; its provider sends :data:`ANTHROPIC_DEFAULT_MAX_TOKENS` when unset).
    - ``thinking_budget``: Anthropic extended thinking, ``budget_tokens`` (at least 1024, the API's
      minimum); ``None`` or 0 is off. The OpenAI-compatible provider ignores it.
    - ``supports_images``: whether the model accepts images; otherwise images are replaced by a
      text placeholder, as Pi does for text-only models.
    """

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    base_url: str = "http://127.0.0.1:8080/v1"
    model: str = "default"
    api_key_env: str | None = None
    max_retries: int = Field(default=3, ge=0)
    backoff_initial_seconds: float = Field(default=1.0, ge=0)
    backoff_max_seconds: float = Field(default=30.0, ge=0)
    retry_after_max_seconds: float = Field(default=60.0, ge=0)
    connect_timeout_seconds: float = Field(default=10.0, gt=0)
    read_timeout_seconds: float = Field(default=120.0, gt=0)
    progress_timeout_seconds: float = Field(default=600.0, gt=0)
    max_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = None
    thinking_budget: int | None = Field(default=None, ge=0)
    supports_images: bool = True


ANTHROPIC_BASE_URL = "https://api.anthropic.com/v1"
"""Anthropic's API root (``/messages`` is appended)."""
ANTHROPIC_API_KEY_ENV = "ANTHROPIC_API_KEY"
"""The variable Anthropic's own tools read the key from."""
ANTHROPIC_DEFAULT_MAX_TOKENS = 16384
"""``max_tokens`` sent to Anthropic when ``maxTokens`` is not set (the API has no default)."""


@runtime_checkable
class Provider(Protocol):
    """Streams one assistant message for a context.

    ``stream`` returns an async iterator of :data:`~pi_lsp.llm.events.StreamEvent`: ``start``,
    deltas, then exactly one ``done``. Setting ``cancel`` ends the stream promptly with a ``done``
    whose message has ``stop_reason == "aborted"`` (content received so far kept). It never
    raises for provider failures (see the module docstring).
    """

    def stream(
        self, context: LlmContext, *, cancel: asyncio.Event | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Start the request and yield its events (see the class docstring)."""
        ...
