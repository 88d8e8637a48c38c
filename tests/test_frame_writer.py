"""``CoalescingWriter``: the first frame of a loop step leaves at once, the rest of the step together."""

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


async def test_the_start_event_leaves_at_once_the_end_event_with_the_response() -> None:
    raw = RawRecorder()
    writer = CoalescingWriter(io.BufferedWriter(raw))

    async def handler() -> None:  # a tool call: two events while it runs, the response after it
        writer.write(b"start;")
        writer.write(b"end;")

    task = asyncio.ensure_future(handler())
    task.add_done_callback(lambda _: writer.write(b"response;"))
    await task
    assert raw.writes == [b"start;"]
    await _settle()
    assert raw.writes == [b"start;", b"end;response;"]
    writer.write(b"next;")
    assert raw.writes == [b"start;", b"end;response;", b"next;"]


async def test_a_frame_from_another_thread_is_written_at_once_after_what_is_buffered() -> None:
    raw = RawRecorder()
    writer = CoalescingWriter(io.BufferedWriter(raw))
    writer.write(b"first;")
    writer.write(b"second;")
    thread = threading.Thread(target=writer.write, args=(b"thread;",))
    thread.start()
    thread.join()
    assert raw.writes == [b"first;", b"second;thread;"]
    await _settle()
    assert raw.writes == [b"first;", b"second;thread;"]


async def test_a_closed_pipe_is_a_warning_not_an_error(caplog: pytest.LogCaptureFixture) -> None:
    raw = RawRecorder()
    writer = CoalescingWriter(io.BufferedWriter(raw))
    writer.write(b"sent;")
    raw.broken = True
    with caplog.at_level(logging.WARNING, logger="pi_lsp.daemon.frame_writer"):
        writer.write(b"lost;")  # buffered: the flush in the loop's callback meets the closed pipe
        await _settle()
    assert "client closed the pipe" in caplog.text
    writer.flush()  # never raises


async def test_the_protocol_sends_the_last_events_with_the_response_and_nothing_after_it() -> None:
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
    assert len(raw.writes) == 1 and b'"n": 1' in raw.writes[0]
    protocol._send_response(7, result={"ok": True})
    assert len(raw.writes) == 2
    second = raw.writes[1]
    assert second.index(b'"n": 2') < second.index(b'"id": 7')
    protocol.notify("pi/event", {"message": "after"})  # after a response: its own write, as before
    assert len(raw.writes) == 3 and b"after" in raw.writes[2]
    await _settle()
    assert len(raw.writes) == 3


async def test_a_response_alone_in_its_step_is_one_write_and_queues_nothing() -> None:
    from pygls.lsp.server import LanguageServer

    from pi_lsp.daemon.pygls_protocol import RobustLanguageServerProtocol
    from pi_lsp.editor.lsp_connection import raw_dict_converter

    raw = RawRecorder()
    server = LanguageServer("frames", "0", protocol_cls=RobustLanguageServerProtocol,
                            converter_factory=raw_dict_converter)
    writer = CoalescingWriter(io.BufferedWriter(raw))
    server.protocol.set_writer(writer)
    server.protocol._send_response(3, result={"ok": True})
    assert len(raw.writes) == 1 and b'"id": 3' in raw.writes[0]
    loop = asyncio.get_running_loop()
    queued = [h for h in (*loop._scheduled, *loop._ready) if getattr(h, "_callback", None) == writer.flush]
    assert queued == []  # no flush left for the loop's next iteration
    server.protocol.notify("pi/event", {"n": 1})  # the next frame still leaves at once
    assert len(raw.writes) == 2 and b'"n": 1' in raw.writes[1]


async def test_write_now_sends_what_was_buffered_before_it_in_the_same_write() -> None:
    raw = RawRecorder()
    writer = CoalescingWriter(io.BufferedWriter(raw))
    writer.write(b"first;")
    writer.write(b"buffered;")
    writer.write_now(b"response;")
    assert raw.writes == [b"first;", b"buffered;response;"]
    writer.write(b"after;")
    assert raw.writes == [b"first;", b"buffered;response;", b"after;"]
    await _settle()
    assert raw.writes == [b"first;", b"buffered;response;", b"after;"]
