"""Bench: the daemon over real stdio (issue 4, Speed).

Targets:
1. ``pi/executeToolCall`` read of a small open document: median <= 1 ms and <= 3x a bare pygls
   JSON-RPC echo measured in the same run (same client, same machine, same transport).
2. One-line edit of a 60,000-line open document: <= 20 ms from the request to the
   ``workspace/applyEdit`` arriving, payload < 1 KB.

Both are measured from the client side (:class:`~pi_lsp.demo.fake_editor.FakeEditor` for pi-lsp,
a pygls ``LanguageClient`` for the echo server), so each round trip includes the transport both
ways; the edit time includes one transit of the request and of the applyEdit. Medians over
alternating runs.

Run: ``python3 bench/bench_daemon.py [calls]``. Prints times and ratios; never asserts.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pi_lsp.demo.fake_editor import FakeEditor  # noqa: E402
from pi_lsp.editor.lsp_connection import raw_dict_converter  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402
from lsprotocol import types  # noqa: E402

ECHO_SERVER = """
from pygls.lsp.server import LanguageServer
from pi_lsp.editor.lsp_connection import raw_dict_converter
server = LanguageServer("echo", "0", converter_factory=raw_dict_converter)
@server.feature("bench/echo")
def echo(ls, params):
    return params
server.start_io()
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), env.get("PYTHONPATH")] if p)
    return env


async def _time(call: Any, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - start)
    return samples


async def _read_vs_echo(root: Path, calls: int) -> None:
    (root / "small.py").write_text("def f():\n    return 1\n" * 20, encoding="utf-8")
    echo = LanguageClient("bench", "0", converter_factory=raw_dict_converter)
    await echo.start_io(sys.executable, "-c", ECHO_SERVER, env=_env())
    await echo.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
    echo.initialized(types.InitializedParams())
    async with FakeEditor(root, env=_env()) as editor:
        editor.open("small.py")
        read = {"toolCall": {"id": "r", "name": "read", "arguments": {"path": "small.py"}}}

        async def pi_read() -> None:
            await editor.request("pi/executeToolCall", read)

        async def bare_echo() -> None:
            await echo.protocol.send_request_async("bench/echo", read)

        await _time(pi_read, 20)
        await _time(bare_echo, 20)
        ours: list[float] = []
        base: list[float] = []
        for _ in range(5):  # alternate so machine load hits both alike
            ours += await _time(pi_read, calls // 5)
            base += await _time(bare_echo, calls // 5)
    await echo.shutdown_async(None)
    echo.exit(None)
    await echo.stop()
    m_ours, m_base = statistics.median(ours), statistics.median(base)
    print(f"read of a small open document: median {m_ours * 1e3:.3f} ms (target <= 1 ms)")
    print(f"bare pygls echo:               median {m_base * 1e3:.3f} ms")
    print(f"ratio: {m_ours / m_base:.2f}x (target <= 3x)")


async def _big_edit(root: Path, runs: int) -> None:
    lines = [f"line number {i} with some text\n" for i in range(60_000)]
    (root / "big.txt").write_text("".join(lines), encoding="utf-8")
    arrived: list[float] = []

    def stamp(_editor: FakeEditor, _params: Any) -> None:
        arrived.append(time.perf_counter())

    options = {"pi": {"edit": {"route": "openDocuments"}}}
    async with FakeEditor(root, env=_env(), before_apply=stamp, initialization_options=options) as editor:
        editor.open("big.txt")
        samples, sizes = [], []
        for run in range(runs):
            old, new = f"line number {30_000 + run} with", f"LINE NUMBER {30_000 + run} with"
            start = time.perf_counter()
            result = await editor.call("edit", {"path": "big.txt", "edits": [{"oldText": old, "newText": new}]})
            if result.get("isError"):
                print("edit failed:", editor.result_text(result))
                return
            samples.append(arrived[-1] - start)
            sizes.append(len(json.dumps(editor.apply_edits[-1]).encode("utf-8")))
    print(f"one-line edit of a 60,000-line open document: median {statistics.median(samples) * 1e3:.2f} ms "
          f"to the applyEdit (target <= 20 ms); payload {max(sizes)} bytes (target < 1024)")


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory(prefix="pi-lsp-bench-") as tmp:
        root = Path(tmp)
        await _read_vs_echo(root, calls)
        await _big_edit(root, 15)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 500))
