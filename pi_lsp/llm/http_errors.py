"""Model-facing descriptions of failed chat completions requests, and the retry rules.

- :func:`describe_http_error` turns a non-2xx reply into one short line: ``{status} {message}``
  where ``message`` is the JSON ``error.message`` (or ``message``/``detail``) when the body is
  JSON, a short note with the page title when the body is an HTML page (never the page), else the
  first 300 characters of the body. A context-overflow reply (Pi's overflow wording, pi-ai
  ``overflow.ts``) is prefixed with :data:`CONTEXT_OVERFLOW_PREFIX`, so the loop and the user can
  recognise it (:func:`is_context_overflow`).
- :func:`is_retryable_status`: 408, 409, 429 and 5xx are retried (the OpenAI SDK's set).
- :func:`parse_retry_after`: ``Retry-After`` as delta seconds or an HTTP date, plus
  ``retry-after-ms`` (OpenAI's header), in seconds, ``None`` when absent or unusable.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Mapping

CONTEXT_OVERFLOW_PREFIX = "Context overflow: the conversation is too long for the model's context window."
MAX_DETAIL_CHARS = 300

_OVERFLOW = re.compile(
    "|".join(
        [
            r"prompt is too long",
            r"request_too_large",
            r"exceeds the context window",
            r"input token count.*exceeds the maximum",
            r"maximum prompt length is \d+",
            r"reduce the length of the messages",
            r"maximum context length is \d+ tokens",
            r"exceeds the limit of \d+",
            r"exceeds the available context size",
            r"greater than the context length",
            r"context window exceeds limit",
            r"exceeded model token limit",
            r"too large for model with \d+ maximum context length",
            r"model_context_window_exceeded",
            r"prompt too long; exceeded (?:max )?context length",
            r"context[_ ]length[_ ]exceeded",
            r"too many tokens",
            r"token limit exceeded",
        ]
    ),
    re.IGNORECASE,
)
_NOT_OVERFLOW = re.compile(r"rate limit|too many requests", re.IGNORECASE)
_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def _json_message(body: bytes) -> str | None:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict):
            for key in ("message", "detail", "msg"):
                if isinstance(error.get(key), str):
                    return error[key]
        if isinstance(error, str):
            return error
    return json.dumps(data, ensure_ascii=False)


def _looks_html(body: bytes, content_type: str) -> bool:
    head = body[:512].lstrip().lower()
    return "html" in content_type.lower() or head.startswith((b"<!doctype html", b"<html", b"<head", b"<body"))


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_DETAIL_CHARS else text[: MAX_DETAIL_CHARS - 3] + "..."


def describe_http_error(status: int, reason: str, content_type: str, body: bytes) -> str:
    """One line describing a non-2xx reply (see the module docstring). Never raises."""
    if _looks_html(body, content_type):
        match = _TITLE.search(body[:65536])
        title = _shorten(match.group(1).decode("utf-8", "replace")) if match else ""
        detail = "the server returned an HTML page instead of JSON" + (f" ({title})" if title else "")
        return f"{status} {reason}: {detail}; check baseUrl (it usually ends in /v1)"
    message = _json_message(body)
    if message is None:
        message = body.decode("utf-8", "replace")
    message = _shorten(message) or reason or "no body"
    line = f"{status} {message}"
    if status == 413 or (status in (400, 422) and is_overflow_text(message)):
        return f"{CONTEXT_OVERFLOW_PREFIX} ({line})"
    return line


def is_overflow_text(text: str) -> bool:
    """True when a provider's error text says the context window was exceeded (Pi's patterns)."""
    return bool(_OVERFLOW.search(text)) and not _NOT_OVERFLOW.search(text)


def is_context_overflow(error_message: str | None) -> bool:
    """True for an ``error_message`` this provider produced for a context overflow."""
    return bool(error_message) and error_message.startswith(CONTEXT_OVERFLOW_PREFIX)


def is_retryable_status(status: int) -> bool:
    """Statuses worth another attempt: 408, 409, 429 and every 5xx."""
    return status in (408, 409, 429) or 500 <= status <= 599


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait as the server asks: ``retry-after-ms``, else ``Retry-After`` (delta
    seconds, or an HTTP date relative to ``now``, epoch seconds). ``None`` if absent/invalid;
    never negative."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            value = float(ms) / 1000.0
            if value >= 0:
                return value
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw is None:
        return None
    raw = raw.strip()
    try:
        value = float(raw)
        return value if value >= 0 else None
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)
