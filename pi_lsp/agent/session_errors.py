"""The errors of :mod:`pi_lsp.agent.session`, importable without the agent loop.

The daemon's handlers name them in ``except`` clauses; keeping them here lets the daemon start
(and answer ``initialize``) without importing the loop, compaction and provider code, which a
prompt imports when it arrives (issue 21).
"""

from __future__ import annotations


class SessionBusy(Exception):
    """A prompt arrived while a run is active; ``str(exc)`` is the message for the client."""


class SessionIdle(Exception):
    """A steering or follow-up message arrived while no run is active; ``str(exc)`` says so."""
