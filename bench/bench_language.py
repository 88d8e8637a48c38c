"""Bench: the editor's language servers through pi-lsp (issue 17, Speed).

Targets:
1. A ``definition`` round trip through the daemon (FakeEditor -> ``pi/executeToolCall`` -> pi-lsp
   -> ``pi/languageRequest`` -> the editor -> pylsp and back) adds < 5 ms to the same
   ``textDocument/definition`` sent straight to pylsp by the same editor process.
2. The diagnostics wait after an edit, when the editor reports no language server for the file
   (``servers: []``), adds < 50 ms: an edit of a ``.txt`` file with ``diagnostics.afterEdit`` on,
   minus the same edit with it off.

Medians over alternating runs, with the load average printed (a busy machine moves both sides).
Run: ``python3 bench/bench_language.py [runs]`` (needs pylsp: ``pip install -e '.[demo]'``).
Prints times and differences; never asserts.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pi_lsp.demo.editor_language_server import pylsp_command  # noqa: E402
from pi_lsp.demo.fake_editor import FakeEditor  # noqa: E402

UTIL = "def helper(x):\n    return x + 1\n"
APP = "from util import helper\n\n\ndef main():\n    return helper(2)\n"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), env.get("PYTHONPATH")] if p)
    return env


def _ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def _definition(root: Path, runs: int) -> None:
    command = pylsp_command()
    assert command is not None, "pylsp is not installed: pip install -e '.[demo]'"
    editor = FakeEditor(root, language_server=command, env=_env(), initialization_options={"pi": {}})
    await editor.start()
    try:
        editor.open("app.py")
        await editor.wait_diagnostics("app.py")
        assert editor.language is not None
        uri = (root / "app.py").as_uri()
        params = {"textDocument": {"uri": uri}, "position": {"line": 4, "character": 11}}
        args = {"path": "app.py", "line": 5, "symbol": "helper"}
        for _ in range(5):  # warm up jedi's caches on both paths
            await editor.call("definition", args)
            await editor.language.client.protocol.send_request_async("textDocument/definition", params)
        through, direct, reads = [], [], []
        for i in range(runs):
            start = time.perf_counter()
            await editor.call("read", {"path": "app.py"}, f"r{i}")
            reads.append(time.perf_counter() - start)
            start = time.perf_counter()
            result = await editor.call("definition", args, f"c{i}")
            through.append(time.perf_counter() - start)
            assert result["isError"] is False, editor.result_text(result)
            start = time.perf_counter()
            await editor.language.client.protocol.send_request_async("textDocument/definition", params)
            direct.append(time.perf_counter() - start)
        added = _ms(through) - _ms(direct)
        print(f"read tool call (pi-lsp's floor):   median {_ms(reads):7.2f} ms")
        print(f"definition straight to pylsp:      median {_ms(direct):7.2f} ms")
        print(f"definition through pi-lsp (tool):  median {_ms(through):7.2f} ms")
        print(f"added by pi-lsp and the editor hop: {added:7.2f} ms (goal < 5 ms)")
    finally:
        await editor.stop()


async def _no_server_wait(root: Path, runs: int) -> None:
    command = pylsp_command()
    on = FakeEditor(root, language_server=command, env=_env(), initialization_options={"pi": {}})
    off = FakeEditor(root, language_server=command, env=_env(),
                     initialization_options={"pi": {"diagnostics": {"afterEdit": False}}})
    await on.start()
    await off.start()
    try:
        (root / "on.txt").write_text("a\n", encoding="utf-8")
        (root / "off.txt").write_text("a\n", encoding="utf-8")
        samples: dict[str, list[float]] = {"on": [], "off": []}
        for i in range(runs):
            for name, editor in (("on", on), ("off", off)):
                old, new = ("a", "b") if i % 2 == 0 else ("b", "a")
                start = time.perf_counter()
                result = await editor.call("edit", {"path": f"{name}.txt", "edits": [{"oldText": old, "newText": new}]}, f"e{i}")
                samples[name].append(time.perf_counter() - start)
                assert result["isError"] is False, editor.result_text(result)
        print(f"edit of a .txt, afterEdit off:     median {_ms(samples['off']):7.2f} ms")
        print(f"edit of a .txt, afterEdit on:      median {_ms(samples['on']):7.2f} ms")
        print(f"diagnostics wait, no server:       {_ms(samples['on']) - _ms(samples['off']):7.2f} ms (goal < 50 ms)")
    finally:
        await on.stop()
        await off.stop()


async def main(runs: int) -> None:
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {runs} runs each")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "util.py").write_text(UTIL, encoding="utf-8")
        (root / "app.py").write_text(APP, encoding="utf-8")
        os.environ["PI_LSP_SESSIONS_DIR"] = str(root / ".sessions")
        await _definition(root, runs)
        await _no_server_wait(root, runs)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 50))
