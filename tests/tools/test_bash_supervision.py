"""Supervision of bash's processes (issue 3, "Tests"): real processes, each bounded by 5 s.

Background children holding the pipes, cancellation, SIGTERM-trapping commands, commands that
wait for input or a terminal, 50 MB of output, and the end of a session.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pi_lsp.agent.tool import ToolContext, ToolError
from pi_lsp.tools.bash import BashArgs, BashTool
from pi_lsp.tools.shell.processes import group_members, is_alive, iter_processes
from tests.tools.bash_support import BOUND, make_env, run_bash, wait_until

REPO = Path(__file__).resolve().parents[2]


def pids_with_argument(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker`` (a unique sleep duration)."""
    found = []
    for info in iter_processes():
        try:
            args = Path(f"/proc/{info.pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if marker.encode() in args and info.state != "Z":
            found.append(info.pid)
    return found


@pytest.fixture
def env(tmp_path: Path):
    environment = make_env(tmp_path)
    yield environment
    environment.processes.end_all_blocking(0.2)  # type: ignore[union-attr]


async def test_background_child_holding_stdout_does_not_delay_the_result(env) -> None:
    out = await run_bash(env, "echo before; sleep 300.101 &")
    assert out.seconds < BOUND and out.text == "before\n"
    [pid] = pids_with_argument("300.101")  # still running (Pi keeps background jobs) ...
    assert os.getpgid(pid) in env.processes.groups  # ... and tracked until the session ends
    await env.processes.end_all(0.5)
    assert await wait_until(lambda: not is_alive(pid))


async def test_silent_detached_child_releases_after_the_idle_drain(env) -> None:
    out = await run_bash(env, "echo prior; (setsid sleep 300.102 &)")
    assert out.seconds < 2.0 and out.text == "prior\n"


async def test_detached_child_that_keeps_writing_is_captured(tmp_path: Path) -> None:
    env = make_env(tmp_path, bash_idle_drain_seconds=1.0)
    command = "(for i in 1 2 3 4 5 6; do echo TICK$i; sleep 0.05; done &) ; echo started"
    out = await run_bash(env, command)
    assert out.seconds < BOUND and "TICK6" in out.text and "started" in out.text
    await env.processes.end_all(0.2)


async def _start_and_cancel(env, command: str, ready: str) -> tuple[str, int, float]:
    """Start ``command``, cancel the call once ``ready`` was printed; return (error text, pgid, s)."""
    seen: list[str] = []
    ctx = ToolContext("c", on_update=lambda r: seen.extend(b.text for b in r.content))  # type: ignore[union-attr]
    task = asyncio.ensure_future(BashTool(env).execute(BashArgs(command=command), ctx))
    assert await wait_until(lambda: any(ready in text for text in seen) and env.processes.groups)
    [pgid] = env.processes.groups
    start = time.monotonic()
    task.cancel()
    with pytest.raises(ToolError) as caught:
        await task
    return caught.value.message, pgid, time.monotonic() - start


async def test_cancel_leaves_no_process_of_the_group(env) -> None:
    text, pgid, seconds = await _start_and_cancel(
        env, "sleep 300.103 & sleep 300.104 & echo ready; wait", "ready"
    )
    assert text == "ready\n\n\nCommand aborted"
    assert seconds < BOUND
    assert group_members(pgid) == []
    assert pids_with_argument("300.103") == pids_with_argument("300.104") == []


async def test_cancel_while_the_shell_starts_ends_its_group_and_says_aborted(env) -> None:
    # the cancellation lands while the shell is being started (the call's first step ends there):
    # the start finishes, then the group is ended as any aborted call's; asyncio's own handling
    # would kill the shell alone, leave its children running and raise CancelledError
    ctx = ToolContext("c", on_update=lambda r: None)
    task = asyncio.ensure_future(BashTool(env).execute(BashArgs(command="sleep 300.105 & echo ready; wait"), ctx))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(ToolError) as caught:
        await task
    assert caught.value.message.endswith("Command aborted")
    assert pids_with_argument("300.105") == []
    assert env.processes.groups == frozenset()


async def test_sigterm_trapping_command_is_killed_by_the_escalation(env) -> None:
    command = "trap '' TERM; echo ready; while true; do sleep 0.05; done"
    text, pgid, seconds = await _start_and_cancel(env, command, "ready")
    assert text.endswith("Command aborted") and seconds < BOUND
    assert group_members(pgid) == []
    out = await run_bash(env, command, timeout=0.3)
    assert out.text == "ready\n\n\nCommand timed out after 0.3 seconds" and out.seconds < BOUND
    assert env.processes.groups == frozenset()


@pytest.mark.parametrize(
    "command",
    ["cat", "read -p 'name? ' name; echo got:$name", "echo x > /dev/tty", "exec 3</dev/tty"],
)
async def test_commands_waiting_for_input_or_a_terminal_return(env, command: str) -> None:
    out = await run_bash(env, command)
    assert out.seconds < BOUND


async def test_50_mb_of_output_is_bounded_with_last_line_and_full_spill(env) -> None:
    # 500,000 lines of 100 bytes: 50 MB, then a distinct last line
    command = "yes 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'" \
        " | head -n 500000; echo LAST-LINE"
    out = await run_bash(env, command)
    assert not out.is_error
    assert len(out.text.encode()) < 51_200 + 300
    assert out.text.split("\n\n[Showing")[0].endswith("\nLAST-LINE")  # the kept lines are joined, no final newline (Pi 1.6.0)
    spill = Path(out.details["fullOutputPath"])
    assert spill.stat().st_size == 500_000 * 100 + len("LAST-LINE\n")
    with spill.open("rb") as handle:
        handle.seek(-len("LAST-LINE\n"), os.SEEK_END)
        assert handle.read() == b"LAST-LINE\n"


_SESSION_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from pi_lsp.tools.shell.processes import become_child_subreaper
    from tests.tools.bash_support import make_env, run_bash

    async def main():
        subreaper = become_child_subreaper()
        env = make_env(Path(sys.argv[1]))
        out = await run_bash(env, sys.argv[2])
        await env.processes.end_all(0.5, include_children=subreaper)
        print(json.dumps({"subreaper": subreaper, "text": out.text}))

    asyncio.run(main())
    """
)


def test_nothing_survives_the_end_of_a_session(tmp_path: Path) -> None:
    # a background job, a daemonised grandchild (new session), one that also cleared its
    # environment, and one that ignores SIGTERM: all gone once the session ended
    command = (
        "sleep 300.201 & (setsid sleep 300.202 &); (setsid env -i /bin/sleep 300.203 &);"
        " (setsid bash -c 'trap \"\" TERM; exec sleep 300.204' &); echo spawned"
    )
    done = subprocess.run(
        [sys.executable, "-c", _SESSION_SCRIPT, str(tmp_path), command],
        cwd=REPO, capture_output=True, text=True, timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert '"subreaper": true' in done.stdout and "spawned" in done.stdout
    for marker in ("300.201", "300.202", "300.203", "300.204"):
        assert pids_with_argument(marker) == [], marker


async def test_session_end_in_process_finds_daemons_by_tag(env) -> None:
    await run_bash(env, "(setsid sleep 300.301 &); sleep 300.302 & echo ok")
    assert await wait_until(lambda: len(pids_with_argument("300.301")) == 1)
    start = time.monotonic()
    await env.processes.end_all(0.5)
    assert time.monotonic() - start < BOUND
    assert await wait_until(lambda: not pids_with_argument("300.301") and not pids_with_argument("300.302"))


async def test_group_is_unregistered_when_the_shell_and_pipes_are_done(env) -> None:
    await run_bash(env, "echo quick")
    assert await wait_until(lambda: env.processes.groups == frozenset())


async def test_parallel_calls_are_independent(env) -> None:
    outs = await asyncio.gather(*(run_bash(env, f"sleep 0.2; echo call-{i}") for i in range(6)))
    assert [o.text for o in outs] == [f"call-{i}\n" for i in range(6)]
    assert max(o.seconds for o in outs) < BOUND


def test_zz_nothing_left_by_the_tests_above() -> None:
    # every earlier test's session ended (fixture teardown): none of their sleeps may remain
    markers = ("300.101", "300.102", "300.103", "300.104", "300.301", "300.302")
    assert [m for m in markers if pids_with_argument(m)] == []


async def test_output_after_the_result_is_dropped_without_breaking_the_writer(env, tmp_path: Path) -> None:
    # the background job writes after the call resolved: no late update, nothing added to the
    # result, and the job's write still succeeds (the pipe is drained, never closed under it)
    done = tmp_path / "writer-finished"
    out = await run_bash(env, f"echo early; (sleep 0.5; echo late; touch {done}) &")
    count = len(out.updates)
    assert out.text == "early\n"
    assert await wait_until(done.exists)
    await asyncio.sleep(0.2)
    assert len(out.updates) == count
    assert all("late" not in block.text for update in out.updates for block in update.content)  # type: ignore[union-attr]


async def test_abort_through_the_pipeline_keeps_the_output_and_ends_the_group(env) -> None:
    from pi_lsp.agent.pipeline import ToolPipeline
    from pi_lsp.agent.tool import AbortSignal
    from pi_lsp.llm.types import ToolCall

    pipeline = ToolPipeline([BashTool(env)])
    signal = AbortSignal()
    call = ToolCall(id="p1", name="bash", arguments={"command": "echo ready; sleep 300.401"})
    running = asyncio.ensure_future(pipeline.execute(call, signal=signal))
    assert await wait_until(lambda: bool(pids_with_argument("300.401")) and bool(env.processes.groups))
    [pgid] = env.processes.groups
    signal.abort("user")
    result = await asyncio.wait_for(running, BOUND)
    assert result.is_error and result.tool_call_id == "p1"
    assert result.content[0].text == "ready\n\n\nCommand aborted"  # type: ignore[union-attr]
    assert group_members(pgid) == [] and pids_with_argument("300.401") == []
