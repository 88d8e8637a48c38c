"""Bench: parse a recorded 5 MB chat completions stream through the provider vs plain httpx.

Run: ``python3 bench/bench_provider.py [--mb 5] [--runs 5]``. A loopback HTTP server (asyncio, in
the same process) serves the same body each time: a replayed turn with text and one large tool
call, in the chunk shapes ``pi-lsp replay`` sends (24-character text deltas, 16-character
argument fragments), written in 64 KiB pieces with chunked transfer encoding.

Times are process CPU time (``time.process_time``, the in-process server's share included in
every case alike), so other load on the machine does not skew the ratios. It prints the best-of-N
time of
- ``httpx bytes``: ``aiter_bytes()`` over the body (transport alone);
- ``httpx lines+json``: ``aiter_lines()`` plus ``json.loads`` of every ``data:`` line (the least
  any client must do to read the stream);
- ``provider``: ``OpenAICompatProvider.stream`` to the final message (SSE decoding, assembly,
  events, argument parsing), without and with a cancel event;
and the ratios. Issue 6 target: provider <= 1.3x iterating the same bytes with httpx; the
``lines+json`` ratio is the one that target is checked against (see the printed verdict).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pi_lsp.llm.openai_compat import OpenAICompatProvider  # noqa: E402
from pi_lsp.llm.provider import LlmContext, ProviderSettings  # noqa: E402
from pi_lsp.llm.recording import RecordedReply, RecordedToolCall, RecordedTurn  # noqa: E402
from pi_lsp.llm.replay import turn_chunks  # noqa: E402
from pi_lsp.llm.types import UserMessage  # noqa: E402

PIECE = 64 * 1024


def make_body(megabytes: float) -> bytes:
    """A recorded turn's SSE body of about ``megabytes`` MB (half text, half tool arguments)."""
    first = _body_for(int(megabytes * 1_000_000))
    return _body_for(int(megabytes * 1_000_000 * megabytes * 1_000_000 / len(first)))


def _body_for(target: int) -> bytes:
    # each 24-char text delta costs ~170 bytes on the wire; each 16-char argument fragment ~180
    sentence = "The quick brown fox jumps over the lazy dog; ünïcödé too. "
    text = (sentence * (target // 2 // 170 * 24 // len(sentence) + 1))
    content = "x = 1\n" * (target // 2 // 180 * 16 // 18)
    turn = RecordedTurn(reply=RecordedReply(
        text=text, tool_calls=[RecordedToolCall(id="call_1", name="write", arguments={"path": "big.py", "content": content})]
    ))
    events = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in turn_chunks(turn, model="bench", number=1)]
    events.append("data: [DONE]\n\n")
    return "".join(events).encode("utf-8")


async def serve(body: bytes) -> tuple[asyncio.base_events.Server, str]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                await reader.readexactly(length)
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
                for i in range(0, len(body), PIECE):
                    piece = body[i : i + PIECE]
                    writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1"


async def main_async(megabytes: float, runs: int) -> None:
    body = make_body(megabytes)
    server, url = await serve(body)
    payload = {"model": "bench", "messages": [], "stream": True}
    async with httpx.AsyncClient(timeout=60) as client:

        async def raw_bytes() -> int:
            total = 0
            async with client.stream("POST", url + "/chat/completions", json=payload) as response:
                async for chunk in response.aiter_bytes():
                    total += len(chunk)
            assert total == len(body)
            return total

        async def lines_json() -> int:
            count = 0
            async with client.stream("POST", url + "/chat/completions", json=payload) as response:
                async for line in response.aiter_lines():
                    if line.startswith("data: ") and line != "data: [DONE]":
                        json.loads(line[6:])
                        count += 1
            return count

        provider = OpenAICompatProvider(ProviderSettings(base_url=url, model="bench"), client)
        ctx = LlmContext("", [UserMessage(content="go")], [])

        async def through_provider(cancel: asyncio.Event | None) -> int:
            count = 0
            async for event in provider.stream(ctx, cancel=cancel):
                count += 1
            assert event.message.stop_reason == "toolUse", event.message.error_message
            assert len(event.message.tool_calls()[0].arguments["content"]) > 1000
            return count

        cases = {
            "httpx bytes": raw_bytes,
            "httpx lines+json": lines_json,
            "provider": lambda: through_provider(None),
            "provider+cancel": lambda: through_provider(asyncio.Event()),
        }
        best: dict[str, float] = {name: float("inf") for name in cases}
        for _ in range(runs):
            for name, case in cases.items():
                started = time.process_time()
                await case()
                best[name] = min(best[name], time.process_time() - started)
    server.close()
    await server.wait_closed()
    print(f"body: {len(body) / 1e6:.2f} MB, best of {runs} runs, process CPU time (server included)")
    for name, seconds in best.items():
        print(f"  {name:18s} {seconds * 1000:8.1f} ms")
    vs_lines = best["provider"] / best["httpx lines+json"]
    print(f"provider / httpx lines+json = {vs_lines:.2f}x (target <= 1.3x: {'met' if vs_lines <= 1.3 else 'NOT met'})")
    print(f"provider+cancel / httpx lines+json = {best['provider+cancel'] / best['httpx lines+json']:.2f}x")
    print(f"provider / httpx bytes = {best['provider'] / best['httpx bytes']:.2f}x (transport alone, for scale)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main_async(args.mb, args.runs))


if __name__ == "__main__":
    main()
