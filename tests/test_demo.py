"""`pi-lsp demo` as a user runs it: a subprocess, its log, its final diff, the files it leaves."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pi_lsp.llm.replay import ReplayServer

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "pi_lsp" / "demo" / "sample"
SESSION = REPO / "pi_lsp" / "demo" / "session.jsonl"
AGENT_LINE = "+- `slugify` folds accents (é → e) and trims dashes at the ends.\n"
USER_LINE = "+- `shorten` breaks at word boundaries (draft, not saved yet)\n"


def _demo(*args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_lsp", "demo", *args],
        cwd=REPO, capture_output=True, text=True, encoding="utf-8", timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_demo_fixes_the_sample_shows_the_change_set_and_reverts_a_hunk(tmp_path: Path, provider: str) -> None:
    work = tmp_path / "demo"
    run = _demo("--workdir", str(work), "--provider", provider)
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    # the live log: tool calls, applyEdits, saves, assistant text
    for needle in (
        'tool call grep {"pattern": "def slugify"}',
        'tool call read {"path": "CHANGELOG.md"}',
        'workspace/applyEdit "pi: edit textkit/slug.py": textkit/slug.py version 1: 2 range(s)',
        "pi/saveDocuments textkit/slug.py (version 2)",
        "saved to disk: textkit/slug.py",
        'workspace/applyEdit "pi: edit CHANGELOG.md": CHANGELOG.md version 2: 1 range(s)',
        # issue 17: the editor's pylsp reports the error the first edit introduced, in its result
        "editor: its language server pylsp checks the Python buffers",
        # what the user typed, on the line after the announcement (no line of blanks between)
        "without saving:\n        - `shorten` breaks at word boundaries (draft, not saved yet)\n",
        "    Diagnostics after this change (pylsp): 1 new problem:\n"
        "    textkit/slug.py:10: error: undefined name 'titel' (pyflakes)\n"
        "assistant: The editor's language server reports an undefined name in my edit",
        'workspace/applyEdit "pi: edit textkit/slug.py": textkit/slug.py version 2: 1 range(s)',
        "  result of edit (ok):\n    Successfully replaced 1 block(s) in textkit/slug.py.\nassistant: Now the changelog entry",
        'tool call bash {"command": "python3 -m unittest -q"}',
        "assistant: All 5 tests pass.",
        "pi/prompt finished: stopReason stop",
        "replay: every request matched the recording",
        f"({provider} format)",
    ):
        assert needle in out, needle
    assert out.count("pi/saveDocuments") == 2  # slug.py twice; the dirty CHANGELOG.md is never saved by the agent
    assert out.count("new problem") == 1  # the fix's result lists nothing
    # review: the turn's change set, per file its state, the calls that changed it, its hunks
    review = out[out.index("pi/changes: "):out.index("--- a/CHANGELOG.md")]
    assert review.startswith("pi/changes: 2 file(s) changed in the session\n")
    assert "\n  textkit/slug.py: modified by edit (call_edit_slug), edit (call_fix_slug); now as the agent left it\n" in review
    assert "\n  CHANGELOG.md: modified by edit (call_edit_changelog); now as the agent left it\n" in review
    slug_hunks = re.findall(r"\n    @@ -(\d+),(\d+) \+(\d+),(\d+) @@ hunk ([0-9a-f]{16}) \(applied\)\n", review)
    assert [h[:4] for h in slug_hunks] == [("8", "2", "8", "4"), ("11", "1", "13", "1"), ("4", "0", "5", "1")]
    assert '\n      -    return text\n      +    return text.strip("-")\n' in review
    changelog_hunk = slug_hunks[2][4]
    assert f"@@ -4,0 +5,1 @@ hunk {changelog_hunk} (applied)\n      {AGENT_LINE}" in review
    # rewind: that hunk taken back through the editor's dirty buffer (an applyEdit, not saved)
    assert f'pi/revertChanges {{"hunks": ["{changelog_hunk}"]}}' in review
    assert re.search(r'workspace/applyEdit "pi: revert CHANGELOG.md": CHANGELOG.md version 3: 1 range\(s\)\n', review)
    assert f"pi/revertChanges: reverted 1 hunk(s): {changelog_hunk}\n  CHANGELOG.md: reverted hunks\n  conflicts: none\n" in review
    # the final diff: disk plus the unsaved buffer, the agent's line reverted, the user's kept
    diff = out[out.index("--- a/CHANGELOG.md"):]
    assert "+++ b/CHANGELOG.md (unsaved editor buffer)\n" in diff
    assert USER_LINE in diff and AGENT_LINE not in diff
    assert "\n ## Unreleased\n+\n" + USER_LINE in diff
    assert "+++ b/textkit/slug.py\n" in diff
    assert '+    text = unicodedata.normalize("NFKD", title)\n' in diff
    assert "+    \"\"\"Turn a title into a URL slug: accents folded (é → e), lower case, words joined by '-',\n" in diff
    assert '+    return text.strip("-")\n' in diff
    assert "unsaved in the editor: CHANGELOG.md (the user's typing kept)" in out
    # what is on disk afterwards: slug.py saved and fixed, CHANGELOG.md untouched
    project = work / "textkit"
    assert (project / "CHANGELOG.md").read_bytes() == (SAMPLE / "CHANGELOG.md").read_bytes()
    assert 'return text.strip("-")' in (project / "textkit" / "slug.py").read_text(encoding="utf-8")
    tests = subprocess.run([sys.executable, "-m", "unittest", "-q"], cwd=project, capture_output=True, text=True, timeout=60)
    assert tests.returncode == 0, tests.stderr
    [journal] = list((work / "sessions").glob("*.jsonl"))
    api = {"openai": "openai-completions", "anthropic": "anthropic-messages"}[provider]
    assert f'"api": "{api}"' in journal.read_text(encoding="utf-8"), "the session was journaled"


def test_demo_against_an_endpoint_given_on_the_command_line(tmp_path: Path) -> None:
    with ReplayServer(SESSION) as server:
        run = _demo("--base-url", server.url, "--model", "replay", "--workdir", str(tmp_path / "d"))
        assert server.divergences == []
        assert server.served == 7
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"model: replay at {server.url} (openai)" in run.stdout
    assert AGENT_LINE in run.stdout  # in the change set
    assert "pi/revertChanges: reverted 1 hunk(s)" in run.stdout


def test_demo_rejects_bad_arguments(tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    assert _demo("--workdir", str(tmp_path / "full")).returncode == 2
    assert _demo("--model", "m").returncode == 2


def test_demo_refuses_a_base_url_without_a_model(tmp_path: Path) -> None:
    run = _demo("--base-url", "http://127.0.0.1:9/v1", "--workdir", str(tmp_path / "d"))
    assert run.returncode == 2 and "--base-url needs --model" in run.stderr
    assert not (tmp_path / "d").exists()  # refused before anything was copied


def test_demo_workdir_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    run = _demo("--workdir", str(tmp_path / "f"))
    assert run.returncode == 2 and "is not a folder" in run.stderr
    assert "Traceback" not in run.stderr
