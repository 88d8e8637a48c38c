"""The bash tool's model-facing behaviour: pi-behaviour.md 2.2, the bash items of section 9, bad input.

Every test runs real commands through :class:`pi_lsp.tools.bash.BashTool` in a temp folder.
Where Pi 0.83 (the checklist) and the peer (0.73.1) disagree, the peer wins, except where issue 12
decided to follow Pi 1.6.0: a trailing newline ends the last line and adds none ("seq 3000" is 3000
lines; the peer says 3001 and shows a phantom empty last line).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from pi_lsp.agent.schema import json_schema_of
from pi_lsp.tools.bash import DESCRIPTION, BashArgs, BashTool
from tests.tools.bash_support import BOUND, make_env, run_bash

def test_name_description_and_schema_are_the_peers() -> None:
    tool = BashTool(make_env_stub())
    assert (tool.name, tool.label, tool.execution_mode) == ("bash", "bash", "parallel")
    assert tool.parameters == {
        "type": "object",
        "required": ["command"],
        "properties": {
            "command": {"type": "string", "description": "Bash command to execute"},
            "timeout": {"type": "number", "description": "Timeout in seconds (optional, no default timeout)"},
        },
    }
    assert tool.parameters == json_schema_of(BashArgs)
    assert tool.description == DESCRIPTION == (
        "Execute a bash command in the current working directory. Returns stdout and stderr. Output"
        " is truncated to last 2000 lines or 50KB (whichever is hit first). If truncated, full output"
        " is saved to a temp file. Optionally provide a timeout in seconds."
    )


def make_env_stub():
    from pi_lsp.tools.environment import ToolEnvironment

    return ToolEnvironment(cwd=Path("/"), files=None, temp_dir=Path("/tmp"))  # type: ignore[arg-type]


@pytest.fixture
def env(tmp_path: Path):
    environment = make_env(tmp_path)
    yield environment
    environment.processes.end_all_blocking(0.2)  # type: ignore[union-attr]


async def test_echo(env) -> None:
    out = await run_bash(env, "echo 'test output'")
    assert (out.text, out.is_error, out.details) == ("test output\n", False, None)


async def test_runs_in_cwd_with_stdin_at_eof(env) -> None:
    out = await run_bash(env, "pwd; cat; echo done")
    assert out.text == f"{env.cwd}\ndone\n"


async def test_true_prints_no_output(env) -> None:
    assert (await run_bash(env, "true")).text == "(no output)"


async def test_exit_code(env) -> None:
    out = await run_bash(env, "exit 1")
    assert out.is_error and out.text == "(no output)\n\nCommand exited with code 1"
    out = await run_bash(env, "printf failed; exit 7")
    assert out.text == "failed\n\nCommand exited with code 7"
    out = await run_bash(env, "echo hi; exit 3")
    assert out.text == "hi\n\n\nCommand exited with code 3"  # the body keeps its newline


async def test_both_streams_arrive(env) -> None:
    out = await run_bash(env, "printf out; printf err >&2")
    assert "out" in out.text and "err" in out.text
    out = await run_bash(env, "echo out; sleep 0.1; echo err >&2; sleep 0.1; echo end")
    assert out.text == "out\nerr\nend\n"


async def test_timeout(env) -> None:
    out = await run_bash(env, "sleep 5", timeout=0.3)
    assert out.is_error and out.text == "Command timed out after 0.3 seconds"
    assert out.seconds < BOUND
    out = await run_bash(env, "echo start; sleep 5", timeout=0.3)
    assert out.text == "start\n\n\nCommand timed out after 0.3 seconds"
    out = await run_bash(env, "sleep 2", timeout=0.01)
    assert out.text == "Command timed out after 0.01 seconds"


async def test_default_timeout_comes_from_settings(tmp_path: Path) -> None:
    env = make_env(tmp_path, bash_timeout_seconds=0.3)
    out = await run_bash(env, "sleep 5")
    assert out.is_error and out.text == "Command timed out after 0.3 seconds"


async def test_timeout_after_3000_lines_keeps_the_full_output(env) -> None:
    out = await run_bash(env, "seq 1 3000; sleep 5", timeout=0.5)
    assert out.is_error and out.text.endswith("Command timed out after 0.5 seconds")
    match = re.search(r"\[Showing lines 1001-3000 of 3000\. Full output: (\S+)\]", out.text)
    assert match, out.text[-300:]
    assert Path(match.group(1)).read_text() == "".join(f"{i}\n" for i in range(1, 3001))


async def test_missing_cwd(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.cwd = tmp_path / "nope"
    out = await run_bash(env, "echo hi")
    assert out.is_error
    assert out.text == f"Working directory does not exist: {env.cwd}\nCannot execute bash commands."


async def test_missing_custom_shell(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.settings.bash_shell = "/custom/bash"
    out = await run_bash(env, "echo hi")
    assert out.is_error and out.text == "Custom shell path not found: /custom/bash"


async def test_custom_shell_is_used(tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.settings.bash_shell = "/bin/sh"
    out = await run_bash(env, 'echo "$0"')
    assert out.text == "/bin/sh\n"


async def test_seq_3000_is_truncated_by_lines_with_full_output(env) -> None:
    out = await run_bash(env, "seq 3000")
    assert not out.is_error
    assert out.details["truncation"]["truncatedBy"] == "lines"
    assert out.details["truncation"]["totalLines"] == 3000
    path = Path(out.details["fullOutputPath"])
    assert path.parent == env.temp_dir and re.fullmatch(r"pi-bash-[0-9a-f]{16}\.log", path.name)
    assert path.read_text() == "".join(f"{i}\n" for i in range(1, 3001))
    assert out.text.startswith("1001\n")
    assert out.text.endswith(f"2999\n3000\n\n[Showing lines 1001-3000 of 3000. Full output: {path}]")


async def test_4000_lines_show_the_last_2000(env) -> None:
    out = await run_bash(env, "for i in $(seq 1 4000); do echo line-$i; done")
    truncation = out.details["truncation"]
    assert (truncation["totalLines"], truncation["outputLines"]) == (4000, 2000)
    assert "line-2000\n" not in out.text and out.text.startswith("line-2001\n")
    assert "line-4000\n\n[Showing lines 2001-4000 of 4000." in out.text


async def test_long_single_line_shows_its_end(env) -> None:
    out = await run_bash(env, "printf '%060000d' 0")
    assert "[Showing last 50.0KB of line 1 (line is 58.6KB). Full output:" in out.text


async def test_byte_limit_notice(env) -> None:
    out = await run_bash(env, "seq 1 1000 | awk '{printf \"%099d\\n\", $1}'")
    assert "[Showing lines 489-1000 of 1000 (50.0KB limit). Full output: " in out.text
    assert out.details["truncation"]["outputLines"] == 512


async def test_multibyte_character_split_across_writes(env) -> None:
    out = await run_bash(env, r"printf '\xe2'; sleep 0.05; printf '\x82'; sleep 0.05; printf '\xac\n'")
    assert out.text == "€\n"


async def test_streams_split_characters_independently(env) -> None:
    command = r"printf '\xe2\x82'; printf '\xc2' >&2; sleep 0.05; printf '\xac\n'; sleep 0.05; printf '\xa3\n' >&2"
    out = await run_bash(env, command)
    assert out.text == "€\n£\n"


async def test_invalid_bytes_do_not_crash(env) -> None:
    out = await run_bash(env, r"printf '\xff\xfe ok \xc3\n'")
    assert out.text == "\ufffd\ufffd ok \ufffd\n"


async def test_escapes_are_stripped(env) -> None:
    out = await run_bash(env, r"printf '\033[1;31mred\033[0m \033]0;title\007done\n'")
    assert out.text == "red done\n"


async def test_updates_are_throttled_and_carry_the_tail(env) -> None:
    out = await run_bash(env, "for i in $(seq 1 5000); do echo line-$i; done")
    assert 1 <= len(out.updates) < 25
    assert out.updates[0].content == []  # the peer's initial empty update
    last = out.updates[-1]
    assert "line-5000" in last.content[0].text  # type: ignore[union-attr]
    assert last.details["truncation"]["totalLines"] == 5000
    assert last.details["fullOutputPath"] == out.details["fullOutputPath"]


async def test_environment_marks_the_process_and_drops_pi_session_variables(env, monkeypatch) -> None:
    monkeypatch.setenv("PI_SESSION_ID", "leaked")
    out = await run_bash(env, 'echo "[$PI_SESSION_ID]" "$PI_LSP_PROCESS_TAG"')
    assert out.text == f"[] {env.processes.token}\n"


@pytest.mark.parametrize("command", ["", "   ", "\n\t"])
async def test_empty_command_is_a_clear_error(env, command: str) -> None:
    out = await run_bash(env, command)
    assert out.is_error and "command is empty" in out.text


@pytest.mark.parametrize(
    ("timeout", "message"),
    [
        (0, "Invalid timeout: must be a finite number of seconds"),
        (-1, "Invalid timeout: must be a finite number of seconds"),
        (math.inf, "Invalid timeout: must be a finite number of seconds"),
        (math.nan, "Invalid timeout: must be a finite number of seconds"),
        (1e12, "Invalid timeout: maximum is 2147483.647 seconds"),
    ],
)
async def test_bad_timeouts_are_refused_before_running(env, timeout: float, message: str) -> None:
    marker = env.cwd / "ran"
    out = await run_bash(env, f"touch {marker}", timeout=timeout)
    assert out.is_error and out.text == message
    assert not marker.exists()


def test_non_numeric_timeout_fails_validation() -> None:
    with pytest.raises(ValueError):
        BashArgs.model_validate({"command": "true", "timeout": "soon"})


async def test_works_without_a_registry(tmp_path: Path) -> None:
    env = make_env(tmp_path, registry=False)
    out = await run_bash(env, "echo plain")
    assert out.text == "plain\n"
    out = await run_bash(env, "sleep 5", timeout=0.2)
    assert out.text == "Command timed out after 0.2 seconds"
