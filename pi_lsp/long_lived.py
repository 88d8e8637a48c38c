"""Start-up without the cyclic garbage collector: what a process builds to serve lives until it exits.

Importing lsprotocol, pygls and pi-lsp and building the server's converter allocate several hundred
thousand objects that never die. Each of them counts towards CPython's collection thresholds, so
start-up runs dozens of collections, and the full ones traverse the whole, growing heap to find
nothing: 128 million of the 2,264 million instructions from the daemon's start to its
``initialize`` reply (cachegrind, issue 21), about 6% of its start-up time; more than a bare pygls
server pays, because pi-lsp's own modules make the heap those collections traverse larger.

:func:`long_lived_objects` runs such a block with the collector off, then freezes what exists
(:func:`gc.freeze`, Python's documented way to keep long-lived start-up objects out of every later
collection), so later collections, including the full one at exit, never scan them again. Only
process entry points use it (``pi_lsp.cli``, the daemon's ``stdio_main``): a library caller's heap
is not frozen behind its back.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def long_lived_objects() -> Iterator[None]:
    """Run the ``with`` block without cyclic garbage collection, then freeze every object that
    exists and turn the collector back on if it was on when the block began.

    Meant for bounded start-up work whose objects live until exit (imports, building the server);
    reference counting still frees everything that is not in a cycle. Nested blocks leave the
    collector off until the outermost one ends. The freeze and the re-enable happen even when the
    block raises.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()
