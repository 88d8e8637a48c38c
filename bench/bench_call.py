"""Bench: the cost of one call (issue 21): four rows, each against a floor measured in the same run.

Rows (``--rows read,exec,edit,start``, all by default):

- ``read``: a small read of an open document over ``pi/executeToolCall``, sequential calls, against
  a bare pygls echo server on pi-lsp's own transport (``serve`` + ``RobustLanguageServerProtocol``;
  the same :class:`FakeEditor` client, the same request). Goal <= 1.5x.
- ``exec``: a small read through ``pi-lsp exec``, one line at a time (send, wait for the answer),
  against a minimal JSON Lines host (parse, read the file, answer) and, where the peer is
  installed, Pi's own JSON Lines driver (``../shared/peer``). Goal <= 3x the floor.
- ``edit``: a one-line ``edit`` of an open document of 1,000 / 60,000 / 600,000 lines, request to
  result, against one ``workspace/applyEdit`` round trip of the same change to the same client
  (a pygls server that sends the edit and answers when the editor replied). The client syncs
  incrementally, as VS Code and Neovim do. Both a clean document (pi-lsp then asks the editor to
  save it, design.md section 3) and a dirty one (the edit stays unsaved) are measured. Goal <= 3x;
  the cost per 10x of input is printed.
- ``start``: process start to the ``initialize`` reply, pi-lsp against a bare pygls server (same
  raw client). Goal <= 1.15x. pi-lsp replies first and builds the session (settings, tools,
  policy) right after, so the wall time is the goal's; the CPU column counts until the reply was
  read and so includes part of the session's build. A warm-up start of each side first writes the
  bytecode of what it imports (as pip does at install), even under ``PYTHONDONTWRITEBYTECODE``.

Each row alternates ours and the floor in blocks (``--reps`` rounds) so machine load hits both
alike; medians of wall time are printed, plus the server's CPU time per call (from
``/proc/PID/stat``: robust when the machine is busy; Linux only). The load average is printed at
the start and the end. Never asserts.

Run: ``python3 bench/bench_call.py [--reps 5] [--calls 200] [--rows read,exec]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from lsprotocol import types  # noqa: E402

from pi_lsp.demo.fake_editor import ALL_PI_FEATURES, FakeEditor  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")

# A bare pygls server on pi-lsp's own transport: the frame reader, dispatch and JSON writer of the
# daemon, pygls's LanguageServer and nothing of pi-lsp's handlers. ``bench/echo`` answers its params;
# ``bench/applyEdit`` sends ``params`` as one workspace/applyEdit and answers the editor's reply.
FLOOR_SERVER = r"""
import asyncio, sys
from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pi_lsp.daemon.pygls_protocol import RobustLanguageServerProtocol
from pi_lsp.daemon.stdio_main import serve
from pi_lsp.editor.lsp_connection import raw_dict_converter
from pygls.protocol import lsp_method

class Protocol(RobustLanguageServerProtocol):
    # no document copies: the floor keeps nothing of the editor's buffers
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params):
        yield from ()
    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params):
        yield from ()
    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params):
        yield from ()
    @lsp_method(types.EXIT)
    def lsp_exit(self, *args):
        self._server.exit_code = 0
        self._server.exit_requested.set()
        yield from ()

class Server(LanguageServer):
    def __init__(self):
        super().__init__("floor", "0", protocol_cls=Protocol, converter_factory=raw_dict_converter)
        self.exit_requested = asyncio.Event()
        self.exit_code = None
    async def end_session(self):
        pass

server = Server()

@server.feature("bench/echo")
def echo(ls, params):
    return params

@server.feature("bench/applyEdit")
async def apply_edit(ls, params):
    typed = ls.protocol._converter.structure(params, types.ApplyWorkspaceEditParams)
    result = await ls.workspace_apply_edit_async(typed)
    return {"applied": result.applied}

proto_in = open(0, "rb", buffering=1 << 16, closefd=False)
proto_out = open(1, "wb", closefd=False)
sys.exit(asyncio.run(serve(server, proto_in, proto_out)))
"""

MINIMAL_JSONL_HOST = r"""
import json, sys, time, os
cwd = sys.argv[1]
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    call = json.loads(line)["toolCall"]
    with open(os.path.join(cwd, call["arguments"]["path"]), "rb") as f:
        text = f.read().decode("utf-8")
    result = {"role": "toolResult", "toolCallId": call["id"], "toolName": call["name"],
              "content": [{"type": "text", "text": text}], "isError": False,
              "timestamp": int(time.time() * 1000)}
    out.write(json.dumps(result).encode() + b"\n")
    out.flush()
"""

SMALL_FILE = "def f():\n    return 1\n" * 20


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), env.get("PYTHONPATH")] if p)
    return env


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1e3


class _Side:
    """One measured side: wall samples (seconds) and total CPU seconds over ``calls`` calls."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.wall: list[float] = []
        self.cpu = 0.0
        self.calls = 0

    def cpu_us(self) -> float:
        return self.cpu / self.calls * 1e6 if self.calls else float("nan")


def _report(
    title: str, ours: _Side, floor: _Side, goal: float, others: list[_Side] = (), unit: str = "us"
) -> None:
    m_ours, m_floor = _median_ms(ours.wall), _median_ms(floor.wall)
    scale = 1e3 if unit == "us" else 1.0
    print(f"{title}")
    for side in (ours, floor, *others):
        cpu = f", server CPU {side.cpu_us() * scale / 1e3:7.0f} {unit}/call" if side.calls else ""
        print(f"  {side.name:28s} median {_median_ms(side.wall) * scale:8.0f} {unit}{cpu}")
    ratio = m_ours / m_floor
    verdict = "meets" if ratio <= goal else "MISSES"
    line = f"  ratio (wall) x{ratio:.2f} of the floor ({verdict} <= {goal}x)"
    if ours.calls and floor.calls and floor.cpu_us() > 0:  # 0: fewer calls than one clock tick of CPU
        line += f"; ratio (server CPU) x{ours.cpu_us() / floor.cpu_us():.2f}"
    print(line)
    for side in others:
        print(f"  ratio (wall) x{m_ours / _median_ms(side.wall):.2f} of {side.name}")


# -- read -------------------------------------------------------------------------------------


async def _time_block(side: _Side, pid: int, call: Any, count: int) -> None:
    cpu0 = _cpu_seconds(pid)
    for _ in range(count):
        start = time.perf_counter()
        await call()
        side.wall.append(time.perf_counter() - start)
    side.cpu += _cpu_seconds(pid) - cpu0
    side.calls += count


async def bench_read(root: Path, reps: int, calls: int) -> None:
    (root / "small.py").write_text(SMALL_FILE, encoding="utf-8")
    for i in range(20):  # other open documents, as in a real session
        (root / f"other{i}.py").write_text(f"x = {i}\n", encoding="utf-8")
    read = {"toolCall": {"id": "r", "name": "read", "arguments": {"path": "small.py"}}}
    ours, floor = _Side("pi-lsp pi/executeToolCall"), _Side("floor (pygls echo)")
    loud = _Side("pi-lsp with toolEvents")
    floor_cmd = [sys.executable, "-c", FLOOR_SERVER]
    quiet = {k: v for k, v in ALL_PI_FEATURES.items() if k != "toolEvents"}  # a client that wants no events
    async with FakeEditor(root, env=_env(), experimental_pi=quiet) as editor, \
            FakeEditor(root, env=_env()) as loud_editor, \
            FakeEditor(root, env=_env(), server_command=floor_cmd) as echo:
        for client in (editor, loud_editor):
            for i in range(20):
                client.open(f"other{i}.py")
            client.open("small.py")
            result = await client.request("pi/executeToolCall", read)
            assert client.result_text(result) == SMALL_FILE, result

        async def pi_read() -> None:
            await editor.request("pi/executeToolCall", read)

        async def loud_read() -> None:
            await loud_editor.request("pi/executeToolCall", read)

        async def bare_echo() -> None:
            await echo.request("bench/echo", read)

        blocks = [(ours, editor, pi_read), (floor, echo, bare_echo), (loud, loud_editor, loud_read)]
        for _, client, call in blocks:
            await _time_block(_Side(""), client.process.pid, call, 50)  # warm up
        for _ in range(reps):
            for side, client, call in blocks:
                await _time_block(side, client.process.pid, call, calls)
        events = len(editor.events)
    _report(f"daemon small read, per call (sequential, {reps} x {calls} calls each; {events} pi/event sent "
            "without toolEvents)", ours, floor, 1.5, [loud])


# -- exec -------------------------------------------------------------------------------------


class _LineHost:
    """A JSON Lines process answering one line per line."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_env(), cwd=cwd)

    def ask(self, line: bytes) -> bytes:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line)
        self.proc.stdin.flush()
        return self.proc.stdout.readline()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


def _peer_argv() -> tuple[list[str], Path] | None:
    try:
        from tests.peer import peer_dir

        directory = peer_dir()
    except BaseException as exc:  # pytest's skip is a BaseException
        print(f"  (no peer: {exc})")
        return None
    return ["node", "pi-tools.mjs"], directory


def bench_exec(root: Path, reps: int, calls: int) -> None:
    (root / "small.py").write_text(SMALL_FILE, encoding="utf-8")
    call = {"toolCall": {"id": "r", "name": "read", "arguments": {"path": "small.py"}}}
    line = (json.dumps(call) + "\n").encode()
    hosts = {
        "pi-lsp exec": _LineHost([sys.executable, "-m", "pi_lsp", "exec", "--cwd", str(root)], root),
        "floor (minimal JSONL host)": _LineHost([sys.executable, "-c", MINIMAL_JSONL_HOST, str(root)], root),
    }
    lines = {name: line for name in hosts}
    peer = _peer_argv()
    if peer is not None:
        hosts["Pi (peer pi-tools.mjs)"] = _LineHost(peer[0], peer[1])
        lines["Pi (peer pi-tools.mjs)"] = (json.dumps({"cwd": str(root), **call}) + "\n").encode()
    sides = {name: _Side(name) for name in hosts}
    try:
        for name, host in hosts.items():
            answer = json.loads(host.ask(lines[name]))
            text = answer["content"][0]["text"]
            assert text == SMALL_FILE, answer
            for _ in range(50):
                host.ask(lines[name])
        for _ in range(reps):
            for name, host in hosts.items():
                side, pid = sides[name], host.proc.pid
                cpu0 = _cpu_seconds(pid)
                for _ in range(calls):
                    start = time.perf_counter()
                    host.ask(lines[name])
                    side.wall.append(time.perf_counter() - start)
                side.cpu += _cpu_seconds(pid) - cpu0
                side.calls += calls
    finally:
        for host in hosts.values():
            host.close()
    names = list(sides)
    _report(f"`pi-lsp exec` small read, per call (sequential, {reps} x {calls} calls each)",
            sides[names[0]], sides[names[1]], 3.0, [sides[n] for n in names[2:]])


# -- edit -------------------------------------------------------------------------------------


class _IncrementalEditor(FakeEditor):
    """FakeEditor syncing an applied edit as incremental changes (VS Code, Neovim), not whole text."""

    async def _apply(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self._edits_of_apply = params
        return await super()._apply(params)

    def _sync(self, changed: list[tuple[Any, list[Any]]]) -> None:
        for buffer, edits in changed:
            ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
            changes = [types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in ordered]
            self._did_change(buffer, changes or [types.TextDocumentContentChangeWholeDocument(text=buffer.text)])


def _edit_lines(count: int) -> str:
    return "".join(f"line number {i} with some text\n" for i in range(count))


async def bench_edit(root: Path, reps: int, sizes: list[int]) -> None:
    floor_cmd = [sys.executable, "-c", FLOOR_SERVER]
    print(f"daemon one-line edit of an open document, request to result ({reps} edits each)")
    rows: dict[str, dict[int, float]] = {}
    for lines in sizes:
        name = f"big{lines}.txt"
        path = root / name
        async with _IncrementalEditor(root, env=_env()) as editor, \
                _IncrementalEditor(root, env=_env(), server_command=floor_cmd) as floor_editor:
            path.write_text(_edit_lines(lines), encoding="utf-8")
            editor.open(name)
            floor_editor.open(name)
            dirty_name = f"dirty{lines}.txt"
            (root / dirty_name).write_text(_edit_lines(lines), encoding="utf-8")
            editor.open(dirty_name, text="user's unsaved line\n" + _edit_lines(lines))
            sides = {k: _Side(k) for k in ("clean", "dirty", "floor")}
            pids = {"clean": editor.process.pid, "dirty": editor.process.pid, "floor": floor_editor.process.pid}
            for run in range(reps + 1):
                target = lines // 2 + run
                old, new = f"line number {target} with", f"LINE NUMBER {target} with"
                for kind in ("clean", "dirty", "floor"):
                    cpu0 = _cpu_seconds(pids[kind])
                    start = time.perf_counter()
                    if kind == "floor":
                        buffer = floor_editor.buffer(name)
                        offset = buffer.text.index(old)
                        line_no = buffer.text.count("\n", 0, offset)
                        edit = {"edit": {"documentChanges": [{
                            "textDocument": {"uri": buffer.uri, "version": buffer.version},
                            "edits": [{"range": {"start": {"line": line_no, "character": 0},
                                                 "end": {"line": line_no, "character": len(old)}},
                                       "newText": new}],
                        }]}}
                        start = time.perf_counter()  # finding the line is the server's job, not the floor's
                        reply = await floor_editor.request("bench/applyEdit", edit)
                        ok = reply.get("applied") is True
                    else:
                        target_name = name if kind == "clean" else dirty_name
                        result = await editor.call("edit", {"path": target_name, "edits": [{"oldText": old, "newText": new}]})
                        ok = not result.get("isError")
                        if not ok:
                            print("  edit failed:", editor.result_text(result))
                    elapsed = time.perf_counter() - start
                    assert ok
                    if run > 0:  # the first round warms up
                        sides[kind].wall.append(elapsed)
                        sides[kind].cpu += _cpu_seconds(pids[kind]) - cpu0
                        sides[kind].calls += 1
            for kind, side in sides.items():
                rows.setdefault(kind, {})[lines] = _median_ms(side.wall)
            floor_ms = rows["floor"][lines]
            print(f"  {lines:>7,} lines: clean {rows['clean'][lines]:8.2f} ms (x{rows['clean'][lines] / floor_ms:.2f}), "
                  f"dirty {rows['dirty'][lines]:8.2f} ms (x{rows['dirty'][lines] / floor_ms:.2f}), "
                  f"floor (one applyEdit round trip) {floor_ms:8.2f} ms; server CPU per edit: clean "
                  f"{sides['clean'].cpu_us() / 1e3:.1f} ms, dirty {sides['dirty'].cpu_us() / 1e3:.1f} ms, "
                  f"floor {sides['floor'].cpu_us() / 1e3:.1f} ms")
            path.unlink()
    for kind in ("clean", "dirty", "floor"):  # the time factor per 10x more lines, between sizes
        steps = [
            f"x{(rows[kind][b] / rows[kind][a]) ** (1 / math.log10(b / a)):.2f} ({a:,} to {b:,})"
            for a, b in zip(sizes, sizes[1:])
        ]
        print(f"  cost per 10x of input, {kind}: {', '.join(steps)}")
    worst = max(rows["clean"][n] / rows["floor"][n] for n in sizes)
    verdict = "meets" if worst <= 3 else "MISSES"
    print(f"  worst ratio (clean) x{worst:.2f} of the floor ({verdict} <= 3x)")


# -- start ------------------------------------------------------------------------------------

BARE_SERVER = r"""
from pygls.lsp.server import LanguageServer
LanguageServer("bare", "0").start_io()
"""


def _start_to_initialize(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Seconds from spawning ``argv`` (in ``env``, else :func:`_env`) to reading its ``initialize``
    reply, and the CPU seconds the process used by then (it is stopped after)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": os.getpid(), "rootUri": cwd.as_uri(), "capabilities": {},
        "workspaceFolders": [{"uri": cwd.as_uri(), "name": cwd.name}]}}).encode()
    frame = f"Content-Length: {len(body)}\r\n\r\n".encode() + body
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env or _env(), cwd=cwd)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(frame)
    proc.stdin.flush()
    reply: dict[str, Any] = {}
    while reply.get("id") != 1:  # log messages may come first
        length = 0
        while (header := proc.stdout.readline().strip()):
            if header.lower().startswith(b"content-length:"):
                length = int(header.split(b":")[1])
        reply = json.loads(proc.stdout.read(length))
    elapsed = time.perf_counter() - start
    cpu = _cpu_seconds(proc.pid)
    assert "result" in reply, reply
    proc.stdin.close()  # end of input ends both servers
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return elapsed, cpu


def bench_start(root: Path, reps: int) -> None:
    argvs = {"pi-lsp": [sys.executable, "-m", "pi_lsp"], "floor (bare pygls)": [sys.executable, "-c", BARE_SERVER]}
    sides = {name: _Side(name) for name in argvs}
    # Warm the page cache, and let each side write the bytecode of what it imports, as an installed
    # package has it (pip compiles at install): with PYTHONDONTWRITEBYTECODE set, a module edited
    # since its .pyc was written would be compiled from source at every start of the measured runs.
    warm_env = {k: v for k, v in _env().items() if k != "PYTHONDONTWRITEBYTECODE"}
    for name, argv in argvs.items():
        _start_to_initialize(argv, root, warm_env)
    for _ in range(max(reps, 3) * 3):
        for name, argv in argvs.items():
            wall, cpu = _start_to_initialize(argv, root)
            sides[name].wall.append(wall)
            sides[name].cpu += cpu
            sides[name].calls += 1
    _report("daemon start to the `initialize` reply (CPU: the process's when the reply was read; pi-lsp "
            "builds its session right after replying, so its CPU includes part of that)",
            sides["pi-lsp"], sides["floor (bare pygls)"], 1.15, unit="ms")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="interleaved rounds (default 5)")
    parser.add_argument("--calls", type=int, default=200, help="calls per round of the per-call rows")
    parser.add_argument("--rows", default="read,exec,edit,start")
    parser.add_argument("--sizes", default="1000,60000,600000", help="edit rows: document sizes in lines")
    args = parser.parse_args()
    rows = args.rows.split(",")
    print(f"load average at start: {_load()} ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory(prefix="pi-lsp-bench-") as tmp:
        root = Path(tmp)
        if "read" in rows:
            await bench_read(root, args.reps, args.calls)
        if "exec" in rows:
            bench_exec(root, args.reps, args.calls)
        if "edit" in rows:
            await bench_edit(root, args.reps, [int(n) for n in args.sizes.split(",")])
        if "start" in rows:
            bench_start(root, args.reps)
    print(f"load average at end: {_load()}")


if __name__ == "__main__":
    asyncio.run(main())
