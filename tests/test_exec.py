"""``pi-lsp exec`` as a real subprocess: the JSON Lines contract of design.md section 5."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 120


def exec_argv(cwd: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "pi_lsp", "exec", "--cwd", str(cwd), *options]


def run_exec(cwd: Path, data: bytes | str, *options: str) -> tuple[list[dict[str, Any]], subprocess.CompletedProcess]:
    raw = data.encode() if isinstance(data, str) else data
    done = subprocess.run(exec_argv(cwd, *options), input=raw, capture_output=True, timeout=TIMEOUT, cwd=REPO)
    lines = [json.loads(line) for line in done.stdout.split(b"\n") if line.strip()]
    return lines, done


def jl(*objects: Any) -> str:
    return "".join(json.dumps(o) + "\n" for o in objects)


def text(result: dict[str, Any]) -> str:
    return "".join(block.get("text", "") for block in result["content"])


def test_single_bare_batch_and_bad_lines_each_get_one_answer(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    data = (
        jl({"cwd": "__ROOT__", "toolCall": {"id": "r1", "name": "read", "arguments": {"path": "a.txt"}}})
        + "\n   \n"
        + "not json\n"
        + jl(
            {"id": "b1", "name": "bash", "arguments": {"command": "echo hi"}},
            {"toolCalls": [{"id": "x", "name": "read", "arguments": {"path": "a.txt"}}, 7,
                           {"id": "y", "name": "read", "arguments": {"path": "nope.txt"}}]},
            [1, 2],
            {"toolCall": {"id": 5, "name": "read", "arguments": {"path": "a.txt"}}},
            {"toolCall": {"id": "n"}},
            {"id": "nan", "name": "read", "arguments": {"path": "a.txt", "offset": float("nan")}},
        )
    )
    out, done = run_exec(tmp_path, data.encode() + b"\xff\xfe\n")
    assert done.returncode == 0, done.stderr
    assert len(out) == 9
    assert out[0]["toolCallId"] == "r1" and text(out[0]) == "one\ntwo\n" and out[0]["isError"] is False
    assert isinstance(out[0]["timestamp"], int) and out[0]["role"] == "toolResult"
    bad = out[1]
    assert bad["toolCallId"] is None and bad["toolName"] == "" and bad["isError"] is True
    assert text(bad).startswith("Invalid input line: not JSON")
    assert text(out[2]) == "hi\n"
    results = out[3]["results"]
    assert [r["toolCallId"] for r in results] == ["x", None, "y"]
    assert [r["isError"] for r in results] == [False, True, True] and "ENOENT" in text(results[2])
    assert out[4]["toolCallId"] is None and text(out[4]).startswith("Invalid input line: expected")
    assert out[5]["toolCallId"] == "5" and not out[5]["isError"]
    assert out[6]["toolCallId"] is None and "name" in text(out[6])
    assert out[7]["toolCallId"] is None and "not JSON" in text(out[7])  # NaN is not JSON
    assert text(out[8]).startswith("Invalid input line: not UTF-8")


def test_length_batch_and_inactive_tools(tmp_path: Path) -> None:
    out, done = run_exec(
        tmp_path,
        jl(
            {"toolCalls": [{"id": "1", "name": "write", "arguments": {"path": "w.txt", "content": "x"}}],
               "stopReason": "length"},
            {"id": "g", "name": "grep", "arguments": {"pattern": "x"}},
        ),
    )
    assert done.returncode == 0
    [length] = out[0]["results"]
    assert length["isError"] and "output token limit" in text(length) and not (tmp_path / "w.txt").exists()
    # default active set: read, bash, edit, write; Pi's text, then how to make grep active
    assert text(out[1]) == "Tool grep not found (grep is not active: start pi-lsp exec with --tools read,bash,edit,write,grep or --tools all)"


def test_tools_option(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x")
    out, done = run_exec(tmp_path, jl({"id": "l", "name": "ls", "arguments": {}},
                                      {"id": "r", "name": "read", "arguments": {"path": "f.txt"}}), "--tools", "ls")
    assert done.returncode == 0 and text(out[0]) == "f.txt" and text(out[1]) == "Tool read not found (read is not active: start pi-lsp exec with --tools ls,read or --tools all)"
    out, done = run_exec(tmp_path, jl({"id": "l", "name": "ls", "arguments": {}}), "--tools", "all")
    assert text(out[0]) == "f.txt"
    _, done = run_exec(tmp_path, "", "--tools", "read,frob")
    assert done.returncode == 2 and b"unknown tools: frob" in done.stderr
    _, done = run_exec(tmp_path, "", "--tools", " , ")
    assert done.returncode == 2 and b"--tools names no tool" in done.stderr
    _, done = run_exec(tmp_path / "missing", "")
    assert done.returncode == 2 and b"not a directory" in done.stderr
    _, done = run_exec(tmp_path, "", "--approvals", "deny")
    assert done.returncode == 0


def test_lines_of_many_megabytes_and_a_last_line_without_newline(tmp_path: Path) -> None:
    content = "é" * 3_000_000 + "\n"  # 6 MB of UTF-8 in one argument
    data = jl({"id": "w", "name": "write", "arguments": {"path": "big.txt", "content": content}})
    data += json.dumps({"id": "r", "name": "bash", "arguments": {"command": "wc -c < big.txt"}})
    out, done = run_exec(tmp_path, data)
    assert done.returncode == 0, done.stderr
    assert not out[0]["isError"], text(out[0])
    assert (tmp_path / "big.txt").read_bytes() == content.encode()
    assert text(out[1]).strip() == "6000001"


def test_stdin_a_regular_file_is_read_like_a_pipe(tmp_path: Path) -> None:
    # epoll cannot watch a regular file: exec reads it in a thread instead of in the event loop
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    source = tmp_path / "input.jsonl"
    source.write_text(
        jl({"id": "1", "name": "read", "arguments": {"path": "a.txt"}}) + "\n{nope\n"
        + json.dumps({"id": "2", "name": "read", "arguments": {"path": "a.txt"}}),  # no final newline
        encoding="utf-8",
    )
    with source.open("rb") as stdin:
        done = subprocess.run(exec_argv(tmp_path), stdin=stdin, capture_output=True, timeout=TIMEOUT, cwd=REPO)
    out = [json.loads(line) for line in done.stdout.split(b"\n") if line.strip()]
    assert done.returncode == 0, done.stderr
    assert [o["toolCallId"] for o in out] == ["1", None, "2"]
    assert text(out[0]) == text(out[2]) == "alpha\n"
    assert out[1]["isError"] and "not JSON" in text(out[1])


def test_lines_run_strictly_one_after_another(tmp_path: Path) -> None:
    out, _ = run_exec(
        tmp_path,
        jl(
            {"id": "1", "name": "bash", "arguments": {"command": "sleep 0.3; echo done > f.txt"}},
            {"id": "2", "name": "read", "arguments": {"path": "f.txt"}},
        ),
    )
    assert text(out[1]) == "done\n"


def test_each_answer_is_flushed_before_the_next_line_arrives(tmp_path: Path) -> None:
    proc = subprocess.Popen(exec_argv(tmp_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=REPO)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(jl({"id": "1", "name": "bash", "arguments": {"command": "echo first"}}).encode())
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "no answer while stdin stays open"
        assert text(json.loads(proc.stdout.readline())) == "first\n"
        proc.stdin.close()
        assert proc.wait(timeout=TIMEOUT) == 0
    finally:
        proc.kill()
        proc.wait()


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_end_of_input_ends_background_processes_and_removes_spill_files(tmp_path: Path) -> None:
    out, done = run_exec(
        tmp_path,
        jl(
            {"id": "bg", "name": "bash", "arguments": {"command": "sleep 300 > /dev/null 2>&1 & echo $!"}},
            {"id": "daemon", "name": "bash",
             "arguments": {"command": "setsid sh -c 'sleep 300' > /dev/null 2>&1 < /dev/null & echo $!"}},
            {"id": "big", "name": "bash", "arguments": {"command": "seq 1 200000"}},
        ),
    )
    assert done.returncode == 0, done.stderr
    pids = [int(text(out[0]).strip()), int(text(out[1]).strip())]
    spill = text(out[2]).rsplit("Full output: ", 1)[1].rstrip("]")
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in pids)
    assert not Path(spill).exists() and not Path(spill).parent.exists()


def test_sigterm_aborts_the_running_call_and_still_answers(tmp_path: Path) -> None:
    proc = subprocess.Popen(exec_argv(tmp_path), stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=REPO)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(jl({"id": "s", "name": "bash", "arguments": {"command": "touch started; sleep 60"}}).encode())
        proc.stdin.flush()
        deadline = time.monotonic() + 30
        while not (tmp_path / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGTERM)
        answer = json.loads(proc.stdout.readline())
        assert answer["toolCallId"] == "s" and answer["isError"] is True
        assert "aborted" in text(answer)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()


def test_lines_read_together_are_answered_in_order_around_one_that_waits(tmp_path: Path) -> None:
    # one chunk: quick reads (answered at once) around a bash call (runs as a task) and blank lines
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    read = {"name": "read", "arguments": {"path": "a.txt"}}
    data = jl({"id": "1", **read}, {"id": "2", "name": "bash", "arguments": {"command": "sleep 0.2; echo slow"}})
    data += "\n  \n" + jl({"id": "3", **read}) + "[1]\n" + jl({"id": "4", **read})
    out, done = run_exec(tmp_path, data)
    assert done.returncode == 0, done.stderr
    assert [o["toolCallId"] for o in out] == ["1", "2", "3", None, "4"]
    assert [text(o) for o in out[:3]] == ["alpha\n", "slow\n", "alpha\n"] and out[3]["isError"]


def test_an_unwritable_stdout_ends_the_session_with_status_1(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    data = jl(*({"id": str(n), "name": "read", "arguments": {"path": "a.txt"}} for n in range(3)))
    # a socket whose peer is gone (not watched for its reader): the first write fails with EPIPE
    ours, theirs = socket.socketpair()
    theirs.close()
    try:
        done = subprocess.run(
            exec_argv(tmp_path), input=data.encode(), stdout=ours.fileno(), stderr=subprocess.PIPE,
            timeout=TIMEOUT, cwd=REPO,
        )
    finally:
        ours.close()
    assert done.returncode == 1
    assert b"cannot write the answer" in done.stderr
    # a pipe whose reader is gone before the first answer: noticed without writing
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            exec_argv(tmp_path), input=data.encode(), stdout=write_end, stderr=subprocess.PIPE,
            timeout=TIMEOUT, cwd=REPO,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 1
    assert b"nobody reads the answers any more" in done.stderr or b"cannot write the answer" in done.stderr


def test_the_reader_of_the_answers_going_away_ends_a_running_call_at_once(tmp_path: Path) -> None:
    # `pi-lsp exec < lines | head -1`: head exits after the first answer while a long bash call
    # runs; exec notices the pipe's reader is gone, ends the command and exits 1 (it used to wait
    # for the call: here 60 s)
    (tmp_path / "a.txt").write_text("alpha\n", encoding="utf-8")
    read_end, write_end = os.pipe()
    proc = subprocess.Popen(exec_argv(tmp_path), stdin=subprocess.PIPE, stdout=write_end, stderr=subprocess.PIPE, cwd=REPO)
    os.close(write_end)
    try:
        assert proc.stdin is not None and proc.stderr is not None
        proc.stdin.write(jl({"id": "r", "name": "read", "arguments": {"path": "a.txt"}},
                            {"id": "s", "name": "bash", "arguments": {"command": "touch started; sleep 60"}}).encode())
        proc.stdin.flush()
        with os.fdopen(read_end, "rb") as answers:
            assert json.loads(answers.readline())["toolCallId"] == "r"
            deadline = time.monotonic() + 30
            while not (tmp_path / "started").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        # the reader is closed now, stdin still open: only the closed pipe can end the session
        assert proc.wait(timeout=30) == 1
        assert b"nobody reads the answers any more" in proc.stderr.read()
        assert subprocess.run(["pgrep", "-f", "sleep 60"], capture_output=True).returncode == 1  # the command ended
    finally:
        proc.kill()
        proc.wait()
