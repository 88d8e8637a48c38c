"""The OpenAI-compatible chat completions provider (OpenAI, Ollama, llama.cpp server, vLLM,
LM Studio, OpenRouter), over httpx with streaming (design.md section 6).

One :meth:`OpenAICompatProvider.stream` call is one ``POST {base_url}/chat/completions`` with
``stream: true``; the reply's server-sent events are decoded (:mod:`pi_lsp.llm.sse`) and assembled
(:mod:`pi_lsp.llm.chunk_assembly`) into deltas and a final message. Failure handling:

- **Retries and timeouts**: :mod:`pi_lsp.llm.http_stream` (shared with the Anthropic provider).
- **Progress**: ``progress_timeout_seconds`` without progress (no text, thinking or tool-call
  delta, no finish) ends a stream whose server sends only SSE comments (keep-alives) or empty
  chunks: silence alone is not the only way a stream stalls.
- **Errors** end the stream with ``stop_reason: "error"`` and a short ``error_message``: the
  server's JSON error message, a note instead of an HTML page, a context-overflow notice
  (:data:`~pi_lsp.llm.http_errors.CONTEXT_OVERFLOW_PREFIX`), or, for a stream cut before
  ``finish_reason``/``[DONE]``, what was received so far (kept in the message content).
- **Abort**: setting ``cancel`` stops the request, a backoff wait or the body read at once; the
  message (with what was received) ends with ``stop_reason: "aborted"``, ``Request was aborted``.

The API key is read from the environment variable named by ``api_key_env`` at each request and
only put in the ``Authorization`` header; it never appears in logs or messages.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from pi_lsp.llm.chat_request import build_request_body
from pi_lsp.llm.chunk_assembly import ChunkAssembler
from pi_lsp.llm.events import StartEvent, StreamEvent
from pi_lsp.llm.http_stream import ABORTED_TEXT, Aborted, CancelWatch, Failed, StreamingHttpProvider, closing_events, stream_ending
from pi_lsp.llm.provider import LlmContext
from pi_lsp.llm.sse import SseDecoder


__all__ = ["ABORTED_TEXT", "OpenAICompatProvider"]


class OpenAICompatProvider(StreamingHttpProvider):
    """A :class:`~pi_lsp.llm.provider.Provider` for OpenAI-compatible chat completions.

    Construction, ``client`` and :meth:`aclose` as in
    :class:`~pi_lsp.llm.http_stream.StreamingHttpProvider`; ``provider_name`` defaults to
    ``openai-compatible``.
    """

    default_provider_name = "openai-compatible"

    @property
    def url(self) -> str:
        """The endpoint: ``{base_url}/chat/completions``."""
        return self.settings.base_url.rstrip("/") + "/chat/completions"

    def stream(
        self, context: LlmContext, *, cancel: asyncio.Event | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Stream one assistant message (see the module docstring); never raises for failures."""
        return self._stream(context, cancel)

    def auth_headers(self, key: str | None) -> dict[str, str]:
        """``Authorization: Bearer {key}`` when a key is configured."""
        return {"authorization": f"Bearer {key}"} if key else {}

    async def _stream(
        self, context: LlmContext, cancel: asyncio.Event | None
    ) -> AsyncIterator[StreamEvent]:
        # one generator level on purpose: every extra async-generator hop costs ~1 us per event
        assembler = ChunkAssembler(provider=self.provider_name, model=self.settings.model)
        watch = CancelWatch(cancel)
        failure: str | None = None
        aborted = False
        response: httpx.Response | None = None
        try:
            response, _ = await self.open(build_request_body(context, self.settings, provider_name=self.provider_name), watch)
            yield StartEvent()
            if "application/json" in response.headers.get("content-type", ""):
                # a server that ignored stream:true answers with one completion object
                raw = await watch.run(response.aread())
                for event in assembler.add(_json_or_fail(raw.decode("utf-8", "replace"))):
                    yield event
            else:
                decoder = SseDecoder()
                loads, add = json.loads, assembler.add
                done = False
                clock = asyncio.get_running_loop().time
                stall_limit = self.settings.progress_timeout_seconds
                last_progress = clock()
                chunks = response.aiter_bytes()
                read = watch.read if watch.cancel is not None else None
                while not done:
                    try:
                        chunk = await (read(chunks.__anext__()) if read else chunks.__anext__())
                    except StopAsyncIteration:
                        break
                    if watch.is_set:
                        raise Aborted
                    progressed = False
                    for data in decoder.feed(chunk):
                        if data == "[DONE]":
                            done = True
                            break
                        try:
                            parsed = loads(data)
                        except ValueError:
                            parsed = _json_or_fail(data)  # raises the model-facing error
                        for event in add(parsed):
                            progressed = True
                            yield event
                        if assembler.server_error is not None:
                            raise Failed(f"Server error: {assembler.server_error}")
                        progressed = progressed or assembler.complete
                    if progressed:
                        last_progress = clock()
                    elif clock() - last_progress > stall_limit:
                        raise Failed(
                            f"Timeout: no progress from {self.url} for {stall_limit:g} s "
                            f"(the server sent only keep-alives or empty chunks; {assembler.received_summary()})"
                        )
                if not done and not assembler.complete:
                    raise Failed(
                        "The stream ended before the response was complete "
                        f"({assembler.received_summary()})"
                    )
        except Exception as exc:  # a bug here must still end the stream with a message
            aborted, failure = stream_ending(exc, self.url, self.settings, assembler.received_summary())
        finally:
            if response is not None:
                await response.aclose()
            watch.close()
        for event in closing_events(*assembler.finish(), aborted=aborted or watch.is_set, failure=failure):
            yield event


def _json_or_fail(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        snippet = data if len(data) <= 120 else data[:117] + "..."
        raise Failed(f"The server sent a chunk that is not JSON: {snippet!r}") from None
