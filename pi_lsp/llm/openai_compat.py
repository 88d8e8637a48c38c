"""The OpenAI-compatible chat completions provider (OpenAI, Ollama, llama.cpp server, vLLM,
LM Studio, OpenRouter), over httpx with streaming (design.md section 6).

One :meth:`OpenAICompatProvider.stream` call is one ``POST {base_url}/chat/completions`` with
``stream: true``; the reply's server-sent events are decoded (:mod:`pi_lsp.llm.sse`) and assembled
(:mod:`pi_lsp.llm.chunk_assembly`) into deltas and a final message. Failure handling:

- **Retries**: 408/409/429/5xx replies and connection failures (refused, reset, timed out before
  the response) are retried up to ``max_retries`` times, waiting ``Retry-After`` when the server
  sends it (up to ``retry_after_max_seconds``; a longer wait fails at once and says so) and
  otherwise ``backoff_initial_seconds * 2**attempt`` capped at ``backoff_max_seconds``. Nothing is
  retried once a 200 response started streaming (its deltas were already delivered).
- **Timeouts**: ``connect_timeout_seconds`` to connect, ``read_timeout_seconds`` of silence at any
  point (waiting for headers or between chunks), and ``progress_timeout_seconds`` without
  progress (no text, thinking or tool-call delta, no finish) while the server sends only SSE
  comments (keep-alives) or empty chunks: silence alone is not the only way a stream stalls.
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
import logging
import os
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import httpx

from pi_lsp.llm.chat_request import build_request_body
from pi_lsp.llm.chunk_assembly import ChunkAssembler
from pi_lsp.llm.events import DoneEvent, StartEvent, StreamEvent
from pi_lsp.llm.http_errors import describe_http_error, is_retryable_status, parse_retry_after
from pi_lsp.llm.provider import LlmContext, ProviderSettings
from pi_lsp.llm.sse import SseDecoder

log = logging.getLogger(__name__)
T = TypeVar("T")

ABORTED_TEXT = "Request was aborted"
MAX_ERROR_BODY_BYTES = 64 * 1024


class _Aborted(Exception):
    """The cancel event was set while waiting."""


class _Failed(Exception):
    """The request failed for good; ``args[0]`` is the model-facing message."""


class _CancelWatch:
    """Races awaitables against an optional cancel event (one waiter task per stream).

    Two mechanisms: :meth:`run` (a task per awaitable, for the few awaits of connecting and
    backing off) and :meth:`read` for the hot body-read loop, where a task per read would cost
    more than the parsing. ``read`` awaits directly; a watcher task cancels the stream's own task
    only while it sits in such a read, and the resulting ``CancelledError`` is turned into
    :class:`_Aborted` with ``Task.uncancel`` (the pattern of ``asyncio.timeout``), so a
    cancellation from anyone else still propagates.
    """

    def __init__(self, cancel: asyncio.Event | None) -> None:
        self.cancel = cancel
        self._waiter: asyncio.Future[Any] | None = None
        self._reader: asyncio.Task[Any] | None = None
        self._reading = False
        self._interrupted = False
        self._watcher: asyncio.Task[None] | None = None

    async def read(self, awaitable: Awaitable[T]) -> T:
        """Await ``awaitable`` in the current task; raise :class:`_Aborted` if cancel fires."""
        if self.cancel is None:
            return await awaitable
        if self.cancel.is_set():
            if hasattr(awaitable, "close"):
                awaitable.close()  # type: ignore[union-attr]
            raise _Aborted
        if self._watcher is None:
            self._reader = asyncio.current_task()
            self._watcher = asyncio.ensure_future(self._interrupt_reads())
        self._reading = True
        try:
            return await awaitable
        except asyncio.CancelledError:
            if self._interrupted and self._reader is not None:
                self._interrupted = False
                if self._reader.uncancel() == 0:
                    raise _Aborted from None
            raise
        finally:
            self._reading = False

    async def _interrupt_reads(self) -> None:
        assert self.cancel is not None
        await self.cancel.wait()
        if self._reading and self._reader is not None:
            self._interrupted = True
            self._reader.cancel()

    @property
    def is_set(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    async def run(self, awaitable: Awaitable[T]) -> T:
        """Await ``awaitable``; raise :class:`_Aborted` (cancelling it) if cancel fires first."""
        if self.cancel is None:
            return await awaitable
        task = asyncio.ensure_future(awaitable)
        if self.cancel.is_set():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise _Aborted
        if self._waiter is None:
            self._waiter = asyncio.ensure_future(self.cancel.wait())
        try:
            await asyncio.wait({task, self._waiter}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            task.cancel()
            raise
        if task.done():
            return task.result()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise _Aborted

    async def sleep(self, seconds: float) -> None:
        """Sleep, or raise :class:`_Aborted` as soon as cancel is set."""
        await self.run(asyncio.sleep(seconds))

    def close(self) -> None:
        for task in (self._waiter, self._watcher):
            if task is not None:
                task.cancel()


def _transport_text(exc: httpx.TransportError, url: str, settings: ProviderSettings) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return f"Connection error: no connection to {url} within {settings.connect_timeout_seconds:g} s"
    if isinstance(exc, httpx.ReadTimeout):
        return f"Timeout: no data from {url} for {settings.read_timeout_seconds:g} s"
    if isinstance(exc, httpx.ConnectError):
        return f"Connection error: could not connect to {url} ({exc or type(exc).__name__})"
    return f"Connection error: {type(exc).__name__} talking to {url} ({exc})"


class OpenAICompatProvider:
    """A :class:`~pi_lsp.llm.provider.Provider` for OpenAI-compatible chat completions.

    ``client``: an ``httpx.AsyncClient`` to use (tests, connection reuse); by default the provider
    creates one (ignoring proxy variables for a loopback ``base_url``) and closes it in
    :meth:`aclose`; call that when done with the provider. ``provider_name`` is written into each message's
    ``provider`` field.
    """

    def __init__(
        self,
        settings: ProviderSettings,
        client: httpx.AsyncClient | None = None,
        *,
        provider_name: str = "openai-compatible",
    ) -> None:
        self.settings = settings
        self.provider_name = provider_name
        self._own_client = client is None
        # proxy variables are honoured for remote APIs but never for a loopback server (replay)
        loopback = httpx.URL(settings.base_url).host in ("127.0.0.1", "localhost", "::1")
        self._client = client or httpx.AsyncClient(trust_env=not loopback)

    async def aclose(self) -> None:
        """Close the HTTP client if this provider created it."""
        if self._own_client:
            await self._client.aclose()

    @property
    def url(self) -> str:
        """The endpoint: ``{base_url}/chat/completions``."""
        return self.settings.base_url.rstrip("/") + "/chat/completions"

    def stream(
        self, context: LlmContext, *, cancel: asyncio.Event | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Stream one assistant message (see the module docstring); never raises for failures."""
        return self._stream(context, cancel)

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        name = self.settings.api_key_env
        if name:
            key = os.environ.get(name, "")
            if not key:
                raise _Failed(f"No API key: the environment variable {name} (apiKeyEnv) is not set")
            headers["authorization"] = f"Bearer {key}"
        return headers

    def _timeout(self) -> httpx.Timeout:
        s = self.settings
        return httpx.Timeout(
            connect=s.connect_timeout_seconds, read=s.read_timeout_seconds,
            write=s.read_timeout_seconds, pool=s.connect_timeout_seconds,
        )

    def _backoff(self, attempt: int, headers: httpx.Headers | None) -> float:
        s = self.settings
        asked = parse_retry_after(headers) if headers is not None else None
        if asked is not None:
            if asked > s.retry_after_max_seconds:
                raise _Failed(
                    f"Rate limited: the server asks to retry after {asked:g} s, longer than "
                    f"retryAfterMaxSeconds ({s.retry_after_max_seconds:g} s)"
                )
            return asked
        return min(s.backoff_max_seconds, s.backoff_initial_seconds * (2**attempt))

    async def _open(self, body: bytes, watch: _CancelWatch) -> httpx.Response:
        """POST with retries; return a 2xx streaming response or raise _Failed/_Aborted."""
        headers = self._headers()
        attempts = self.settings.max_retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            request = self._client.build_request(
                "POST", self.url, content=body, headers=headers, timeout=self._timeout()
            )
            try:
                response = await watch.run(self._client.send(request, stream=True))
            except httpx.TransportError as exc:
                text = _transport_text(exc, self.url, self.settings)
                if last:
                    raise _Failed(text + (f" (after {attempts} attempts)" if attempts > 1 else ""))
                delay = self._backoff(attempt, None)
                log.warning("%s; retrying in %.3g s (attempt %d of %d)", text, delay, attempt + 2, attempts)
                await watch.sleep(delay)
                continue
            if response.status_code < 300:
                return response
            try:
                error_body = await watch.run(self._read_limited(response))
            except httpx.TransportError:
                error_body = b""
            finally:
                await response.aclose()
            text = describe_http_error(
                response.status_code, response.reason_phrase,
                response.headers.get("content-type", ""), error_body,
            )
            retryable = is_retryable_status(response.status_code)
            if last or not retryable:
                raise _Failed(text + (f" (after {attempts} attempts)" if retryable and attempts > 1 else ""))
            delay = self._backoff(attempt, response.headers)
            log.warning("%s; retrying in %.3g s (attempt %d of %d)", text, delay, attempt + 2, attempts)
            await watch.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    async def _read_limited(response: httpx.Response) -> bytes:
        data = bytearray()
        async for chunk in response.aiter_bytes():
            data += chunk
            if len(data) >= MAX_ERROR_BODY_BYTES:
                break
        return bytes(data)

    async def _stream(
        self, context: LlmContext, cancel: asyncio.Event | None
    ) -> AsyncIterator[StreamEvent]:
        # one generator level on purpose: every extra async-generator hop costs ~1 us per event
        assembler = ChunkAssembler(provider=self.provider_name, model=self.settings.model)
        watch = _CancelWatch(cancel)
        failure: str | None = None
        aborted = False
        response: httpx.Response | None = None
        try:
            response = await self._open(build_request_body(context, self.settings, provider_name=self.provider_name), watch)
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
                        raise _Aborted
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
                            raise _Failed(f"Server error: {assembler.server_error}")
                        progressed = progressed or assembler.complete
                    if progressed:
                        last_progress = clock()
                    elif clock() - last_progress > stall_limit:
                        raise _Failed(
                            f"Timeout: no progress from {self.url} for {stall_limit:g} s "
                            f"(the server sent only keep-alives or empty chunks; {assembler.received_summary()})"
                        )
                if not done and not assembler.complete:
                    raise _Failed(
                        "The stream ended before the response was complete "
                        f"({assembler.received_summary()})"
                    )
        except _Aborted:
            aborted = True
        except _Failed as exc:
            failure = str(exc.args[0])
        except httpx.TransportError as exc:
            failure = _transport_text(exc, self.url, self.settings)
            failure += f"; the stream was cut ({assembler.received_summary()})"
        except Exception as exc:  # a bug here must still end the stream with a message
            log.exception("provider stream failed")
            failure = f"Provider error: {type(exc).__name__}: {exc}"
        finally:
            if response is not None:
                await response.aclose()
            watch.close()
        message, ends = assembler.finish()
        if aborted or watch.is_set:
            message.stop_reason, message.error_message = "aborted", ABORTED_TEXT
        elif failure is not None:
            message.stop_reason, message.error_message = "error", failure
        else:
            for end in ends:
                yield end
        yield DoneEvent(message)


def _json_or_fail(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        snippet = data if len(data) <= 120 else data[:117] + "..."
        raise _Failed(f"The server sent a chunk that is not JSON: {snippet!r}") from None
