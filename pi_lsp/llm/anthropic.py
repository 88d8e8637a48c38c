"""The Anthropic Messages API provider (``POST {base_url}/messages``), over httpx with streaming.

One :meth:`AnthropicProvider.stream` call is one request with ``stream: true``
(:mod:`pi_lsp.llm.anthropic_request` builds the body, with prompt-caching breakpoints); the reply's
server-sent events are decoded (:mod:`pi_lsp.llm.sse`) and assembled
(:mod:`pi_lsp.llm.anthropic_stream`) into the same deltas and final message as the
OpenAI-compatible provider produces, with ``api: "anthropic-messages"``.

- **Headers**: ``x-api-key`` (from the variable named by ``api_key_env``; none when no name is
  set, for local proxies), ``anthropic-version: 2023-06-01``, and with budget-based thinking
  ``anthropic-beta: interleaved-thinking-2025-05-14`` so the model may think between tool calls
  (pi-ai sends it too; adaptive-thinking models interleave without it).
- **Retries, timeouts, HTTP errors**: the shared machinery of :mod:`pi_lsp.llm.http_stream`
  (429 with ``retry-after``, 529 ``overloaded_error`` and other 5xx retried; 400
  ``invalid_request_error`` and 401 ``authentication_error`` reported at once with the API's
  message; a too-long prompt reported as a context overflow).
- An ``error`` event in a 200 stream before any content block (typically ``overloaded_error``) is
  retried like a 529, within the same ``max_retries``; once content was delivered it ends the
  stream with ``stop_reason: "error"``, ``Server error: {message} ({type})``.
- A stream that ends before ``message_delta`` brought the stop reason is an error that says what
  was received (kept in the message content); abort ends it ``aborted``.

The SDK is not used: streaming, cancellation and the retry rules stay ours and shared with the
other provider (one behaviour, one set of settings and tests).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx

from pi_lsp.llm.anthropic_request import API, RequestError, adaptive_thinking, build_request_body
from pi_lsp.llm.anthropic_stream import MessageAssembler
from pi_lsp.llm.events import StartEvent, StreamEvent
from pi_lsp.llm.http_stream import Aborted, CancelWatch, Failed, StreamingHttpProvider, closing_events, stream_ending
from pi_lsp.llm.provider import LlmContext
from pi_lsp.llm.sse import SseDecoder

log = logging.getLogger(__name__)

ANTHROPIC_VERSION = "2023-06-01"
INTERLEAVED_THINKING_BETA = "interleaved-thinking-2025-05-14"


class AnthropicProvider(StreamingHttpProvider):
    """A :class:`~pi_lsp.llm.provider.Provider` for Anthropic's Messages API (module docstring).

    Construction, ``client`` and :meth:`aclose` as in
    :class:`~pi_lsp.llm.http_stream.StreamingHttpProvider`; ``provider_name`` defaults to
    ``anthropic``.
    """

    default_provider_name = "anthropic"

    @property
    def url(self) -> str:
        """The endpoint: ``{base_url}/messages``."""
        return self.settings.base_url.rstrip("/") + "/messages"

    def auth_headers(self, key: str | None) -> dict[str, str]:
        """``x-api-key`` when a key is configured, ``anthropic-version`` and the thinking beta."""
        headers = {"anthropic-version": ANTHROPIC_VERSION}
        if key:
            headers["x-api-key"] = key
        if self.settings.thinking_budget and not adaptive_thinking(self.settings.model):
            headers["anthropic-beta"] = INTERLEAVED_THINKING_BETA
        return headers

    def stream(
        self, context: LlmContext, *, cancel: asyncio.Event | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Stream one assistant message (see the module docstring); never raises for failures."""
        return self._stream(context, cancel)

    def _assembler(self) -> MessageAssembler:
        return MessageAssembler(provider=self.provider_name, model=self.settings.model, api=API)

    async def _stream(
        self, context: LlmContext, cancel: asyncio.Event | None
    ) -> AsyncIterator[StreamEvent]:
        assembler = self._assembler()
        watch = CancelWatch(cancel)
        failure: str | None = None
        aborted = False
        started = False
        response: httpx.Response | None = None
        try:
            try:
                body = build_request_body(context, self.settings, provider_name=self.provider_name)
            except RequestError as exc:
                raise Failed(str(exc)) from None
            attempt = 0
            while True:
                assembler = self._assembler()
                response, attempt = await self.open(body, watch, first_attempt=attempt)
                if "text/event-stream" not in response.headers.get("content-type", "text/event-stream"):
                    raw = await watch.run(response.aread())
                    raise Failed(f"Expected an event stream, got {response.headers.get('content-type')}: "
                                 f"{_snippet(raw.decode('utf-8', 'replace'))!r}")
                decoder = SseDecoder()
                chunks = response.aiter_bytes()
                read = watch.read if watch.cancel is not None else None
                retry = False
                while not (retry or assembler.stopped):
                    try:
                        chunk = await (read(chunks.__anext__()) if read else chunks.__anext__())
                    except StopAsyncIteration:
                        break
                    if watch.is_set:
                        raise Aborted
                    for data in decoder.feed(chunk):
                        events = assembler.add(_json_or_fail(data))
                        if not started and assembler.received_content:
                            started = True
                            yield StartEvent()
                        for event in events:
                            yield event
                        if assembler.server_error is not None:
                            if not started and assembler.retryable_error and attempt < self.settings.max_retries:
                                retry = True
                                break
                            raise Failed(f"Server error: {assembler.server_error}")
                        if assembler.stopped:
                            break
                if not retry:
                    break
                await response.aclose()
                response = None
                delay = self.backoff(attempt, None)
                log.warning("Server error before any content: %s; retrying in %.3g s (attempt %d of %d)",
                            assembler.server_error, delay, attempt + 2, self.settings.max_retries + 1)
                await watch.sleep(delay)
                attempt += 1
            if not assembler.complete:
                raise Failed(f"The stream ended before the response was complete ({assembler.received_summary()})")
        except Exception as exc:  # a bug here must still end the stream with a message
            aborted, failure = stream_ending(exc, self.url, self.settings, assembler.received_summary())
        finally:
            if response is not None:
                await response.aclose()
            watch.close()
        for event in closing_events(*assembler.finish(), aborted=aborted or watch.is_set, failure=failure):
            yield event


def _snippet(text: str) -> str:
    return text if len(text) <= 120 else text[:117] + "..."


def _json_or_fail(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        raise Failed(f"The server sent an event that is not JSON: {_snippet(data)!r}") from None
