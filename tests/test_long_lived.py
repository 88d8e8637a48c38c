"""``pi_lsp.long_lived.long_lived_objects``: start-up blocks run without the cyclic collector,
then what they built is frozen (the daemon's own start is checked in
``tests/e2e/test_daemon_startup.py``)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from pi_lsp.long_lived import long_lived_objects


@pytest.fixture(autouse=True)
def _restore_collector() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.enable()
    yield
    gc.unfreeze()  # give the test process's objects back to the collector
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the cyclic collector frees it


def test_the_block_runs_without_collection_and_what_it_built_is_frozen() -> None:
    gc.unfreeze()
    before = gc.get_freeze_count()
    with long_lived_objects():
        assert not gc.isenabled()
        kept = [_Node() for _ in range(1000)]
        assert gc.get_count()[0] > 700  # allocations counted, no collection ran to reset them
    assert gc.isenabled()
    assert gc.get_freeze_count() >= before + len(kept)
    assert all(gc.is_tracked(node) for node in kept)


def test_nested_blocks_leave_the_collector_off_until_the_outermost_ends() -> None:
    with long_lived_objects():
        with long_lived_objects():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off() -> None:
    gc.disable()
    with long_lived_objects():
        pass
    assert not gc.isenabled()


def test_a_block_that_raises_still_freezes_and_turns_the_collector_back_on() -> None:
    gc.unfreeze()
    with pytest.raises(RuntimeError), long_lived_objects():
        raise RuntimeError("start-up failed")
    assert gc.isenabled() and gc.get_freeze_count() > 0
