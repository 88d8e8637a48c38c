"""``CoalescingWriter``: the frames of one event-loop step leave in one write, in order."""

from __future__ import annotations

import asyncio
import io
import logging
import threading

import pytest

from pi_lsp.daemon.frame_writer import CoalescingWriter


class RawRecorder(io.RawIOBase):
    """A raw stream that records each system-call-level write (or fails like a closed pipe)."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.broken = False

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        if self.broken:
            raise BrokenPipeError("client gone")
        self.writes.append(bytes(data))
        return len(data)


async def _settle() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


async def test_events_and_the_response_after_them_leave_in_one_write() -> None:
    raw = RawRecorder()
    writer = CoalescingWriter(io.BufferedWriter(raw))

    async def handler() -> None:  # a tool call: two events while it runs, the response after it
        writer.write(b"start;")
        writer.write(b"end;")

    task = asyncio.ensure_future(handler())
    task.add_done_callback(lambda _: writer.write(b"response;"))
    await task
    await _settle()
    assert raw.writes == [b"start;end;response;"]
    writer.write(b"next;")
    await _settle()
    assert raw.writes == [b"start;end;response;", b"next;"]


async def test_a_frame_from_another_thread_is_written_at_once_after_what_is_buffered() -> None:
    raw = RawRecorder()
    writer = CoalescingWriter(io.BufferedWriter(raw))
    writer.write(b"loop;")
    thread = threading.Thread(target=writer.write, args=(b"thread;",))
    thread.start()
    thread.join()
    assert raw.writes == [b"loop;thread;"]
    await _settle()
    assert raw.writes == [b"loop;thread;"]


async def test_a_closed_pipe_is_a_warning_not_an_error(caplog: pytest.LogCaptureFixture) -> None:
    raw = RawRecorder()
    raw.broken = True
    writer = CoalescingWriter(io.BufferedWriter(raw))
    with caplog.at_level(logging.WARNING, logger="pi_lsp.daemon.frame_writer"):
        writer.write(b"lost;")
        await _settle()
    assert "client closed the pipe" in caplog.text
    writer.flush()  # never raises


async def test_the_protocol_sends_events_with_the_response_and_nothing_after_it_in_that_write() -> None:
    from pygls.lsp.server import LanguageServer

    from pi_lsp.daemon.pygls_protocol import RobustLanguageServerProtocol
    from pi_lsp.editor.lsp_connection import raw_dict_converter

    raw = RawRecorder()
    server = LanguageServer("frames", "0", protocol_cls=RobustLanguageServerProtocol,
                            converter_factory=raw_dict_converter)
    protocol = server.protocol
    protocol.set_writer(CoalescingWriter(io.BufferedWriter(raw)))
    protocol.notify("pi/event", {"n": 1})
    protocol.notify("pi/event", {"n": 2})
    assert raw.writes == []
    protocol._send_response(7, result={"ok": True})
    protocol.notify("pi/event", {"message": "after"})
    assert len(raw.writes) == 1
    first = raw.writes[0]
    assert first.index(b'"n": 1') < first.index(b'"n": 2') < first.index(b'"id": 7') and b"after" not in first
    await _settle()
    assert len(raw.writes) == 2 and b"after" in raw.writes[1]
