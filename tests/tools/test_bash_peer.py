"""bash against the real Pi peer: the same commands give the same text, error flag and truncation.

The shared peer cases for bash (``../shared/peer/examples/cases.jsonl``) plus a few more edge
commands run through both; spill-file paths are normalised (the peer writes to ``$TMPDIR``, pi-lsp
to the session's temp folder). The case ``x2`` (``command: 123``) needs the pipeline's coercion and
is covered by the pipeline's own peer tests.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.peer import CASES, MAKE_FIXTURE, run_peer
from tests.tools.bash_support import make_env, run_bash

pytestmark = pytest.mark.peer

EXTRA_COMMANDS = [
    "printf 'a\\nb'",
    "seq 4000",
    "printf '%060000d\\n' 0",
    "echo out; echo err >&2; exit 2",
    "seq 1 2000",
    "seq 1 1999",
    "printf '\\xe2\\x82\\xac\\n'",
    "head -c 51200 /dev/zero | tr '\\0' y",
    "head -c 51201 /dev/zero | tr '\\0' y",
]

_SPILL = re.compile(r"/\S*/pi-bash-[0-9a-f]{16}\.log")

# Decided difference (docs/differences.md, issue 12): tail truncation counts lines as Pi 1.6.0 does,
# so an output ending in a newline has no phantom empty last line. The 0.73.1 peer's notice, then
# pi-lsp's (None: not truncated at all, since 2,000 lines are within the limit).
PHANTOM_LINE_CASES: dict[str, tuple[str, str | None]] = {
    "b2": ("[Showing lines 198002-200001 of 200001. Full output: ", "[Showing lines 198001-200000 of 200000. Full output: "),
    "b7": ("[Showing lines 489-1001 of 1001 (50.0KB limit). ", "[Showing lines 489-1000 of 1000 (50.0KB limit). "),
    "extra1": ("[Showing lines 2002-4001 of 4001. Full output: ", "[Showing lines 2001-4000 of 4000. Full output: "),
    "extra2": ("(no output)\n\n[Showing lines 2-2 of 2 (50.0KB limit). ", "[Showing last 50.0KB of line 1 (line is 58.6KB). "),
    "extra4": ("[Showing lines 2-2001 of 2001. Full output: ", None),
}


def _bash_cases() -> list[dict]:
    cases = [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]
    chosen = [
        case for case in cases
        if case["toolCall"]["name"] == "bash" and isinstance(case["toolCall"]["arguments"].get("command"), str)
    ]
    for index, command in enumerate(EXTRA_COMMANDS):
        chosen.append({"cwd": "__ROOT__", "toolCall": {"id": f"extra{index}", "name": "bash", "arguments": {"command": command}}})
    return chosen


def _normalise(value):
    if isinstance(value, str):
        return _SPILL.sub("<spill>", value)
    if isinstance(value, dict):
        return {key: _normalise(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_normalise(item) for item in value]
    return value


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bash-peer")
    subprocess.run([sys.executable, str(MAKE_FIXTURE), str(root)], check=True, capture_output=True)
    return root


@pytest.fixture(scope="module")
def peer_answers(peer: Path, fixture_root: Path) -> dict[str, dict]:
    requests = []
    for case in _bash_cases():
        request = dict(case)
        request["cwd"] = str(fixture_root)
        request.pop("expect", None)
        requests.append(request)
    return {answer["id"]: answer for answer in run_peer(peer, requests)}


@pytest.mark.parametrize("case", _bash_cases(), ids=lambda c: c["toolCall"]["id"])
async def test_same_result_as_the_peer(case: dict, peer_answers: dict, fixture_root: Path, tmp_path: Path) -> None:
    env = make_env(tmp_path)
    env.cwd = fixture_root
    args = case["toolCall"]["arguments"]
    try:
        ours = await run_bash(env, args["command"], args.get("timeout"))
    finally:
        await env.processes.end_all(0.2)  # type: ignore[union-attr]
    theirs = peer_answers[case["toolCall"]["id"]]
    if case["toolCall"]["id"] in PHANTOM_LINE_CASES:
        _check_decided_tail(args["command"], ours, theirs, *PHANTOM_LINE_CASES[case["toolCall"]["id"]])
        return
    assert ours.is_error == theirs["isError"]
    assert _normalise(ours.text) == _normalise(theirs["content"][0]["text"])
    if not ours.is_error:
        assert _normalise(ours.details) == _normalise(theirs["details"])
    if "expect" in case:
        assert case["expect"]["contains"] in ours.text


def _check_decided_tail(command: str, ours, theirs: dict, peer_notice: str, our_notice: str | None) -> None:
    """The peer shows 0.73.1's phantom line; pi-lsp shows the real last lines, ending with the
    output's last line, and no empty line before its notice."""
    real = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=True).stdout
    assert real.endswith("\n")
    assert peer_notice in theirs["content"][0]["text"]
    assert ours.is_error is False
    if our_notice is None:
        assert ours.text == real and (ours.details or {}).get("truncation") is None
        return
    body, _, notice = ours.text.partition("\n\n[")
    assert ("[" + notice).startswith(our_notice)
    assert body and not body.endswith("\n") and real[:-1].endswith(body)
    truncation = ours.details["truncation"]
    assert truncation["totalLines"] == real.count("\n") and truncation["outputLines"] == body.count("\n") + 1
    assert theirs["details"]["truncation"]["totalLines"] == truncation["totalLines"] + 1
