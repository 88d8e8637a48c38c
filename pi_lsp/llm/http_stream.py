"""The HTTP machinery shared by the streaming providers: one POST with retries, timeouts and
cancellation (design.md section 6).

:class:`StreamingHttpProvider` is the base of :class:`~pi_lsp.llm.openai_compat.OpenAICompatProvider`
and :class:`~pi_lsp.llm.anthropic.AnthropicProvider`; a subclass gives the endpoint (:attr:`url`)
and its authentication headers (:meth:`auth_headers`), and parses the streamed body itself.

- **Retries** (:meth:`StreamingHttpProvider.open`): 408/409/429/5xx replies (Anthropic's 529
  ``overloaded_error`` included) and connection failures (refused, reset, timed out before the
  response) are retried up to ``max_retries`` times, waiting ``Retry-After`` when the server sends
  it (up to ``retry_after_max_seconds``; a longer wait fails at once and says so) and otherwise
  ``backoff_initial_seconds * 2**attempt`` capped at ``backoff_max_seconds``. A reply carrying
  ``x-should-retry: true|false`` (sent by OpenAI and Anthropic) overrides the status rule, as their
  SDKs do. Nothing is retried once a 2xx response started streaming.
- **Timeouts**: ``connect_timeout_seconds`` to connect, ``read_timeout_seconds`` of silence at any
  point (waiting for headers or between chunks).
- **Errors** raise :class:`Failed` with a short model-facing line
  (:func:`~pi_lsp.llm.http_errors.describe_http_error`); **abort** raises :class:`Aborted`.

The API key is read from the environment variable named by ``api_key_env`` at each request
(:meth:`StreamingHttpProvider.api_key`) and only put in a header; it never appears in logs or
messages.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Mapping
from typing import Any, TypeVar

import httpx

from pi_lsp.llm.http_errors import describe_http_error, is_retryable_status, parse_retry_after
from pi_lsp.llm.provider import ProviderSettings

log = logging.getLogger(__name__)
T = TypeVar("T")

ABORTED_TEXT = "Request was aborted"
MAX_ERROR_BODY_BYTES = 64 * 1024


def should_retry(status: int, headers: Mapping[str, str]) -> bool:
    """Whether a failed reply is worth another attempt: ``x-should-retry`` when the server sends
    ``true``/``false``, else :func:`~pi_lsp.llm.http_errors.is_retryable_status`."""
    hint = (headers.get("x-should-retry") or "").strip().lower()
    if hint in ("true", "false"):
        return hint == "true"
    return is_retryable_status(status)


class Aborted(Exception):
    """The cancel event was set while waiting."""


class Failed(Exception):
    """The request failed for good; ``args[0]`` is the model-facing message."""


class CancelWatch:
    """Races awaitables against an optional cancel event (one waiter task per stream).

    Two mechanisms: :meth:`run` (a task per awaitable, for the few awaits of connecting and
    backing off) and :meth:`read` for the hot body-read loop, where a task per read would cost
    more than the parsing. ``read`` awaits directly; a watcher task cancels the stream's own task
    only while it sits in such a read, and the resulting ``CancelledError`` is turned into
    :class:`Aborted` with ``Task.uncancel`` (the pattern of ``asyncio.timeout``), so a
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
        """Await ``awaitable`` in the current task; raise :class:`Aborted` if cancel fires."""
        if self.cancel is None:
            return await awaitable
        if self.cancel.is_set():
            if hasattr(awaitable, "close"):
                awaitable.close()  # type: ignore[union-attr]
            raise Aborted
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
                    raise Aborted from None
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
        """Await ``awaitable``; raise :class:`Aborted` (cancelling it) if cancel fires first."""
        if self.cancel is None:
            return await awaitable
        task = asyncio.ensure_future(awaitable)
        if self.cancel.is_set():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise Aborted
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
        raise Aborted

    async def sleep(self, seconds: float) -> None:
        """Sleep, or raise :class:`Aborted` as soon as cancel is set."""
        await self.run(asyncio.sleep(seconds))

    def close(self) -> None:
        for task in (self._waiter, self._watcher):
            if task is not None:
                task.cancel()


def transport_text(exc: httpx.TransportError, url: str, settings: ProviderSettings) -> str:
    if isinstance(exc, httpx.ConnectTimeout):
        return f"Connection error: no connection to {url} within {settings.connect_timeout_seconds:g} s"
    if isinstance(exc, httpx.ReadTimeout):
        return f"Timeout: no data from {url} for {settings.read_timeout_seconds:g} s"
    if isinstance(exc, httpx.ConnectError):
        return f"Connection error: could not connect to {url} ({exc or type(exc).__name__})"
    return f"Connection error: {type(exc).__name__} talking to {url} ({exc})"


def stream_ending(exc: Exception, url: str, settings: ProviderSettings, received: str) -> tuple[bool, str | None]:
    """How a stream that raised ``exc`` ends: ``(aborted, failure)`` for :func:`closing_events`.

    :class:`Aborted` is an abort; :class:`Failed` carries its model-facing line; a transport error
    says what was cut and ``received`` (the assembler's summary of what had arrived); anything else
    is a bug, logged with its traceback and still reported as ``Provider error: ...``.
    """
    if isinstance(exc, Aborted):
        return True, None
    if isinstance(exc, Failed):
        return False, str(exc.args[0])
    if isinstance(exc, httpx.TransportError):
        return False, f"{transport_text(exc, url, settings)}; the stream was cut ({received})"
    log.error("provider stream failed", exc_info=exc)
    return False, f"Provider error: {type(exc).__name__}: {exc}"


def closing_events(message: Any, ends: list[Any], *, aborted: bool, failure: str | None) -> list[Any]:
    """The last events of a stream from ``assembler.finish()``'s ``(message, ends)``: an aborted or
    failed stream ends with its DoneEvent only (stop reason ``aborted``/``error``), a finished one
    with its end events, then the DoneEvent."""
    from pi_lsp.llm.events import DoneEvent

    if aborted:
        message.stop_reason, message.error_message = "aborted", ABORTED_TEXT
        return [DoneEvent(message)]
    if failure is not None:
        message.stop_reason, message.error_message = "error", failure
        return [DoneEvent(message)]
    return [*ends, DoneEvent(message)]


class StreamingHttpProvider:
    """Base of the HTTP providers (see the module docstring).

    ``client``: an ``httpx.AsyncClient`` to use (tests, connection reuse); by default the provider
    creates one (ignoring proxy variables for a loopback ``base_url``) and closes it in
    :meth:`aclose`; call that when done with the provider. ``provider_name`` is written into each
    message's ``provider`` field.
    """

    default_provider_name = "http"

    def __init__(
        self,
        settings: ProviderSettings,
        client: httpx.AsyncClient | None = None,
        *,
        provider_name: str | None = None,
    ) -> None:
        self.settings = settings
        self.provider_name = provider_name or self.default_provider_name
        self._own_client = client is None
        # proxy variables are honoured for remote APIs but never for a loopback server (replay)
        loopback = httpx.URL(settings.base_url).host in ("127.0.0.1", "localhost", "::1")
        self._client = client or httpx.AsyncClient(trust_env=not loopback)

    async def aclose(self) -> None:
        """Close the HTTP client if this provider created it."""
        if self._own_client:
            await self._client.aclose()

    @property
    def url(self) -> str:  # pragma: no cover - every subclass overrides it
        """The endpoint the body is POSTed to."""
        raise NotImplementedError

    def auth_headers(self, key: str | None) -> dict[str, str]:  # pragma: no cover - overridden
        """The headers carrying ``key`` (``None`` when no ``apiKeyEnv`` is set) and any
        API-specific ones."""
        raise NotImplementedError

    def api_key(self) -> str | None:
        """The key from the variable named by ``api_key_env``; ``None`` when no name is set.
        Raises :class:`Failed` (naming the variable, never a value) when it is unset or empty."""
        name = self.settings.api_key_env
        if not name:
            return None
        key = os.environ.get(name, "")
        if not key:
            raise Failed(f"No API key: the environment variable {name} (apiKeyEnv) is not set")
        return key

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        headers.update(self.auth_headers(self.api_key()))
        return headers

    def _timeout(self) -> httpx.Timeout:
        s = self.settings
        return httpx.Timeout(
            connect=s.connect_timeout_seconds, read=s.read_timeout_seconds,
            write=s.read_timeout_seconds, pool=s.connect_timeout_seconds,
        )

    def backoff(self, attempt: int, headers: httpx.Headers | None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based): ``Retry-After`` when
        ``headers`` carry it (raising :class:`Failed` when longer than
        ``retry_after_max_seconds``), else the doubling backoff."""
        s = self.settings
        asked = parse_retry_after(headers) if headers is not None else None
        if asked is not None:
            if asked > s.retry_after_max_seconds:
                raise Failed(
                    f"Rate limited: the server asks to retry after {asked:g} s, longer than "
                    f"retryAfterMaxSeconds ({s.retry_after_max_seconds:g} s)"
                )
            return asked
        return min(s.backoff_max_seconds, s.backoff_initial_seconds * (2**attempt))

    async def open(
        self, body: bytes, watch: CancelWatch, *, first_attempt: int = 0
    ) -> tuple[httpx.Response, int]:
        """POST ``body`` with retries; return a 2xx streaming response and the attempt it took
        (0-based), or raise :class:`Failed` / :class:`Aborted`.

        ``first_attempt``: attempts already spent on this request (a provider that retries a
        stream which failed before any content passes them, so ``max_retries`` bounds the total).
        """
        headers = self._headers()
        attempts = self.settings.max_retries + 1
        for attempt in range(min(first_attempt, attempts - 1), attempts):
            last = attempt == attempts - 1
            request = self._client.build_request(
                "POST", self.url, content=body, headers=headers, timeout=self._timeout()
            )
            try:
                response = await watch.run(self._client.send(request, stream=True))
            except httpx.TransportError as exc:
                text = transport_text(exc, self.url, self.settings)
                if last:
                    raise Failed(text + (f" (after {attempts} attempts)" if attempts > 1 else ""))
                delay = self.backoff(attempt, None)
                log.warning("%s; retrying in %.3g s (attempt %d of %d)", text, delay, attempt + 2, attempts)
                await watch.sleep(delay)
                continue
            if response.status_code < 300:
                return response, attempt
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
            retryable = should_retry(response.status_code, response.headers)
            if last or not retryable:
                raise Failed(text + (f" (after {attempts} attempts)" if retryable and attempts > 1 else ""))
            delay = self.backoff(attempt, response.headers)
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
