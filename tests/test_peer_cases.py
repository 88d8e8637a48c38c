"""The shared conformance cases (``../shared/peer/examples/cases.jsonl``) through ``pi-lsp exec``.

All cases run in file order through ONE ``pi-lsp exec --tools all`` process on ONE fixture tree (later
cases see earlier edits, as in the peer's selftest); each case's ``expect`` block is checked. The
differential test runs the same cases through the real Pi peer on a second tree and compares
``isError`` and the text, with the fixture root, spill-file paths and walker order normalised.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pi_lsp.tools import TOOL_NAMES, create_tools
from pi_lsp.tools.environment import ToolEnvironment
from pi_lsp.tools.file_io.local_files import LocalFileAccess
from tests.peer import CASES, MAKE_FIXTURE, REPO, run_peer

ROOT = "__ROOT__"
KNOWN_EXPECT_KEYS = {"isError", "contains"}
# error texts that come from the external fd binary, whose version differs from the peer's (grep's
# regex error, g8, is given in the peer's ripgrep 13 form: pi_lsp/tools/search/regex_error.py)
BINARY_DEPENDENT_TEXT = {"f5"}
# tools whose output order across files is the walker's in Pi (pi-lsp sorts by path)
UNORDERED_TOOLS = {"grep", "find"}
# Decided differences (docs/differences.md, issue 12: Pi 1.6.0's fixes): the peer's 0.73.1 mark
# in its answer, and pi-lsp's expected answer (None: the peer's answer without its last notice)
DECIDED_DIFFERENCES: dict[str, tuple[str, str | None]] = {
    # bash: no phantom empty line after the final newline, so "of 200000", not "of 200001"
    "b2": ("[Showing lines 198002-200001 of 200001.", "\n".join(str(i) for i in range(198001, 200001))
           + "\n\n[Showing lines 198001-200000 of 200000. Full output: <spill file>]"),
    "b7": ("[Showing lines 489-1001 of 1001 (50.0KB limit).", "\n".join("%099d" % i for i in range(489, 1001))
           + "\n\n[Showing lines 489-1000 of 1000 (50.0KB limit). Full output: <spill file>]"),
    # find: exactly `limit` results print no "limit reached" notice
    "f3": ("[1 results limit reached.", None),
}


def load_cases() -> list[dict[str, Any]]:
    if not CASES.is_file():
        if os.environ.get("CI") == "true":  # issue 12: in CI a missing peer fails the run
            raise RuntimeError(f"PEER CASES MISSING: {CASES} (CI=true: the differential tests must run)")
        pytest.skip(f"PEER CASES MISSING: {CASES}", allow_module_level=True)
    return [json.loads(line) for line in CASES.read_text(encoding="utf-8").splitlines() if line.strip()]


ALL_CASES = load_cases()


def registered_tools() -> set[str]:
    env = ToolEnvironment(cwd=Path("."), files=LocalFileAccess(), temp_dir=Path("."))
    return {tool.name for tool in create_tools(env)}


def substitute(value: Any, root: str) -> Any:
    if isinstance(value, str):
        return value.replace(ROOT, root)
    if isinstance(value, list):
        return [substitute(item, root) for item in value]
    if isinstance(value, dict):
        return {key: substitute(item, root) for key, item in value.items()}
    return value


def result_text(content: list[dict[str, Any]], root: str) -> str:
    parts = [block["text"] if block["type"] == "text" else f"<{block['type']} {block.get('mimeType')}>" for block in content]
    text = "".join(parts).replace(root, ROOT)
    return re.sub(r"Full output: [^\]\n]+", "Full output: <spill file>", text)


def make_fixture(directory: Path) -> Path:
    subprocess.run([sys.executable, str(MAKE_FIXTURE), str(directory)], check=True, timeout=60)
    return directory


def runnable(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cases whose tool is registered, plus cases naming tools that are never built-in (x1)."""
    known = registered_tools()
    return [c for c in cases if c["toolCall"]["name"] in known or c["toolCall"]["name"] not in TOOL_NAMES]


@pytest.fixture(scope="module")
def our_answers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, Any]]]:
    root = make_fixture(tmp_path_factory.mktemp("ours") / "tree")
    cases = runnable(ALL_CASES)
    data = "".join(json.dumps(substitute(case, str(root))) + "\n" for case in cases)
    done = subprocess.run(
        [sys.executable, "-m", "pi_lsp", "exec", "--cwd", str(root), "--tools", "all"],
        input=data.encode(), capture_output=True, timeout=600, cwd=REPO,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    answers = [json.loads(line) for line in done.stdout.split(b"\n") if line.strip()]
    assert len(answers) == len(cases), "one answer per input line"
    by_id = {}
    for case, answer in zip(cases, answers):
        assert answer["toolCallId"] == case["toolCall"]["id"]
        by_id[case["toolCall"]["id"]] = answer
    return root, by_id


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c["toolCall"]["id"])
def test_case_meets_its_expectation(case: dict[str, Any], our_answers) -> None:
    root, answers = our_answers
    call_id = case["toolCall"]["id"]
    if call_id not in answers:
        pytest.skip(f"tool {case['toolCall']['name']!r} is not registered yet")
    expect = case["expect"]
    unknown = set(expect) - KNOWN_EXPECT_KEYS
    assert not unknown, f"cases.jsonl has expectation keys this test does not check: {unknown}"
    answer = answers[call_id]
    text = result_text(answer["content"], str(root))
    assert answer["isError"] is expect["isError"], text
    if "contains" in expect:
        assert expect["contains"] in text
    assert answer["role"] == "toolResult" and answer["toolName"] == case["toolCall"]["name"]
    assert isinstance(answer["timestamp"], int)


@pytest.mark.peer
def test_same_results_as_the_peer(peer: Path, our_answers, tmp_path: Path) -> None:
    root, answers = our_answers
    theirs_root = make_fixture(tmp_path / "tree")
    cases = runnable(ALL_CASES)
    theirs = run_peer(peer, [{"cwd": str(theirs_root), "toolCall": substitute(c["toolCall"], str(theirs_root))} for c in cases])
    differences = []
    for case, their in zip(cases, theirs):
        call_id = case["toolCall"]["id"]
        ours = answers[call_id]
        our_text = result_text(ours["content"], str(root))
        their_text = result_text(their["content"], str(theirs_root))
        if case["toolCall"]["name"] in UNORDERED_TOOLS:
            our_text, their_text = sorted(our_text.split("\n")), sorted(their_text.split("\n"))
        if call_id in BINARY_DEPENDENT_TEXT:
            our_text = their_text
        if call_id in DECIDED_DIFFERENCES:
            mark, expected = DECIDED_DIFFERENCES[call_id]
            assert mark in result_text(their["content"], str(theirs_root)), call_id
            if expected is None:  # the peer's answer less its notice (a blank line, then the notice)
                their_text = [line for line in their_text if line and mark not in line]
            else:
                their_text = expected
        if ours["isError"] != their["isError"] or our_text != their_text:
            differences.append(f"{call_id}:\n  ours: {ours['isError']} {our_text!r}\n  peer: {their['isError']} {their_text!r}")
    assert not differences, "\n".join(differences)
