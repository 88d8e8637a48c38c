"""How often the editor said a document's diagnostics changed (``pi/diagnosticsChanged``, issue 17).

A counter per document plus one :class:`asyncio.Condition`: a waiter notes the count *before* the
change it waits for (so a notification that arrives before it starts waiting is not missed) and
then waits for the count to move past it, then for a quiet period with no further change
(KNOWLEDGE_SPEC, "What pi-lsp does with them"). Documents are keyed by real path, so two URIs of
one file (``%3A`` spelled differently, a symlink) count together; non-file URIs by the URI.

A change may carry the document version its diagnostics describe (``pi/diagnosticsChanged``'s
optional ``versions``: the ``version`` of the language server's ``publishDiagnostics``, or the
document's version when the editor saw the change, an upper bound). A waiter that gives the version
the document has now does not count a change dated to an older version: a publish computed for the
text before an edit that arrives after it (the after-edit settle race) neither starts nor extends
the wait. Changes without a version count as before.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from pi_lsp.editor.documents import path_of_uri


def key_of_path(path: Path) -> str:
    """The counter key of a file: its real path."""
    return os.path.realpath(path)


def key_of_uri(uri: str) -> str:
    """The counter key of a URI: its file's real path, or the URI itself for other schemes."""
    path = path_of_uri(uri)
    return key_of_path(path) if path is not None else uri


RECENT = 64
"""Changes per document whose versions are kept (older ones count as unversioned)."""


class DiagnosticsChanges:
    """The per-document change counters (see the module docstring). Use from the event loop only."""

    def __init__(self) -> None:
        self._counts: dict[str, int] = {}
        self._recent: dict[str, deque[tuple[int, int | None]]] = {}
        """key -> (count, version or None) of its last :data:`RECENT` changes, oldest first."""
        self._condition: asyncio.Condition | None = None

    def _cond(self) -> asyncio.Condition:
        if self._condition is None:
            self._condition = asyncio.Condition()
        return self._condition

    def count(self, path: Path) -> int:
        """Changes reported for ``path`` so far (dated or not)."""
        return self._counts.get(key_of_path(path), 0)

    async def changed(self, uris: Iterable[str], versions: Mapping[str, int] | None = None) -> None:
        """``pi/diagnosticsChanged {uris, versions?}``: count one change per distinct document, with
        the version ``versions`` gives its URI (``None`` when none, or when two URIs of one file
        disagree on whether they have one; the newest when both do), then wake the waiters."""
        dated: dict[str, int | None] = {}
        for uri in uris:
            if not isinstance(uri, str):
                continue
            key = key_of_uri(uri)
            version = (versions or {}).get(uri)
            if key not in dated:
                dated[key] = version
            else:
                known = dated[key]
                dated[key] = None if known is None or version is None else max(known, version)
        for key, version in dated.items():
            count = self._counts.get(key, 0) + 1
            self._counts[key] = count
            self._recent.setdefault(key, deque(maxlen=RECENT)).append((count, version))
        async with self._cond():
            self._cond().notify_all()

    def _current_since(self, key: str, since: int, version: int | None) -> int:
        """Changes of ``key`` after count ``since`` not dated before ``version`` (all of them when
        ``version`` is ``None``; a change too old to have its version kept counts)."""
        total = self._counts.get(key, 0)
        if version is None or total <= since:
            return max(total - since, 0)
        recent = self._recent.get(key) or deque()
        first_kept = recent[0][0] if recent else total + 1
        counted = max(min(first_kept - 1, total) - since, 0)  # changes whose version was not kept
        return counted + sum(1 for count, dated in recent if count > since and (dated is None or dated >= version))

    async def _wait_for(self, ready: Callable[[], bool], timeout: float) -> bool:
        """Wait up to ``timeout`` s for ``ready()``; its value at the end."""
        if ready():
            return True
        if timeout <= 0:
            return False
        condition = self._cond()
        try:
            async with condition:
                await asyncio.wait_for(condition.wait_for(ready), timeout)
        except TimeoutError:
            return ready()
        return True

    async def wait_settled(
        self, path: Path, since: int, settle_seconds: float, quiet_seconds: float, version: int | None = None
    ) -> bool:
        """Wait for a change of ``path`` after count ``since``, then for ``quiet_seconds`` without
        another, all within ``settle_seconds`` (seconds). With ``version`` (the document's version
        now, as the client numbers it), a change dated to an older version is not counted.
        True when it settled in time; False when no change came or the changes went on past the bound."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + settle_seconds
        key = key_of_path(path)

        def changes() -> int:
            return self._current_since(key, since, version)

        if not await self._wait_for(lambda: changes() > 0, deadline - loop.time()):
            return False
        while True:
            current = changes()
            left = deadline - loop.time()
            if left <= 0:
                return False
            if not await self._wait_for(lambda: changes() > current, min(quiet_seconds, left)):
                return quiet_seconds <= left  # quiet for the whole period, or cut by the bound
