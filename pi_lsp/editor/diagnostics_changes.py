"""How often the editor said a document's diagnostics changed (``pi/diagnosticsChanged``, issue 17).

A counter per document plus one :class:`asyncio.Condition`: a waiter notes the count *before* the
change it waits for (so a notification that arrives before it starts waiting is not missed) and
then waits for the count to move past it, then for a quiet period with no further change
(KNOWLEDGE_SPEC, "What pi-lsp does with them"). Documents are keyed by real path, so two URIs of
one file (``%3A`` spelled differently, a symlink) count together; non-file URIs by the URI.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from pathlib import Path

from pi_lsp.editor.documents import path_of_uri


def key_of_path(path: Path) -> str:
    """The counter key of a file: its real path."""
    return os.path.realpath(path)


def key_of_uri(uri: str) -> str:
    """The counter key of a URI: its file's real path, or the URI itself for other schemes."""
    path = path_of_uri(uri)
    return key_of_path(path) if path is not None else uri


class DiagnosticsChanges:
    """The per-document change counters (see the module docstring). Use from the event loop only."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._condition: asyncio.Condition | None = None

    def _cond(self) -> asyncio.Condition:
        if self._condition is None:
            self._condition = asyncio.Condition()
        return self._condition

    def count(self, path: Path) -> int:
        """Changes reported for ``path`` so far."""
        return self._counts.get(key_of_path(path), 0)

    async def changed(self, uris: Iterable[str]) -> None:
        """``pi/diagnosticsChanged {uris}``: count one change per distinct document, wake waiters."""
        for key in {key_of_uri(uri) for uri in uris if isinstance(uri, str)}:
            self._counts[key] = self._counts.get(key, 0) + 1
        async with self._cond():
            self._cond().notify_all()

    async def _wait_past(self, key: str, count: int, timeout: float) -> bool:
        """Wait up to ``timeout`` s for ``key``'s count to exceed ``count``; True if it did."""
        if self._counts.get(key, 0) > count:
            return True
        if timeout <= 0:
            return False
        condition = self._cond()
        try:
            async with condition:
                await asyncio.wait_for(condition.wait_for(lambda: self._counts.get(key, 0) > count), timeout)
        except TimeoutError:
            return self._counts.get(key, 0) > count
        return True

    async def wait_settled(self, path: Path, since: int, settle_seconds: float, quiet_seconds: float) -> bool:
        """Wait for a change of ``path`` after count ``since``, then for ``quiet_seconds`` without
        another, all within ``settle_seconds`` (seconds). True when it settled in time; False when
        no change came or the changes went on past the bound."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + settle_seconds
        key = key_of_path(path)
        if not await self._wait_past(key, since, deadline - loop.time()):
            return False
        while True:
            current = self._counts.get(key, 0)
            left = deadline - loop.time()
            if left <= 0:
                return False
            if not await self._wait_past(key, current, min(quiet_seconds, left)):
                return quiet_seconds <= left  # quiet for the whole period, or cut by the bound
