"""pi-lsp.el in real Emacs against the real daemon and ``pi-lsp replay`` (issues 7 and 15).

- ``emacs --batch``: pi-lsp.el's own jsonrpc connection (no eglot) syncs every buffer of the
  project whatever its mode: an unsaved CHANGELOG.md in text-mode gets the agent's line next to
  the user's text and stays unsaved; greet.py (python-mode) is edited, saved, and undone one edit
  at a time; a file no buffer visits is visited, edited and saved; a clean buffer whose file bash
  rewrote is reloaded before the agent edits it; the transcript shows readable
  tool lines, diffs, the live tail of a command, expansion. Bounded by ``timeout``; stdin is
  /dev/null so a stray prompt fails instead of hanging.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.editors.editor_support import (
    EDITOR_TIMEOUT_SECONDS,
    EMACS_DIR,
    SESSIONS,
    Replay,
    assert_passed,
    editor_env,
    journal_user_messages,
    make_shim,
    require_program,
    run_editor,
)

GREET = 'def greet():\n    return "hi"\n\n\ndef bye():\n    return "bye"\n'
CHANGELOG = "# Changelog\n\n## 0.1.0\n- first release\n"
FILES = {"greet.py": GREET, "CHANGELOG.md": CHANGELOG, "closed.txt": "first\nsecond\n", "data.txt": "v1\n"}
NOTES = {"notes.txt": "one\ntwo\nthree\nfour\nfive\n"}


def _workspace(tmp_path: Path, files: dict[str, str] = FILES) -> Path:
    """``tmp_path/ws``, a project (``.git`` marks its root) holding ``files`` (relative path -> text)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    for name, text in files.items():
        (ws / name).write_text(text, encoding="utf-8")
    return ws


def _require(name: str, package: str) -> str:
    """``require_program``, except that under CI=true a missing program fails the test."""
    if os.environ.get("CI") == "true" and shutil.which(name) is None:
        pytest.fail(f"{name} is missing under CI=true; .ci/run installs it (apt-get install {package})")
    return require_program(name, package)


def _batch_scenario_passes(emacs: str, tmp_path: Path, ws: Path, script: str, label: str, *,
                           session: str | None = None, **env: str) -> list[str]:
    """Run ``emacs --batch -l editors/emacs/tests/<script>`` in ``ws`` (the ``pi-lsp`` shim on
    ``PATH``, the result file in ``PI_TEST_RESULT``, ``env`` added) and assert every check passed.

    With ``session`` (a file of ``tests/editors/sessions``), ``pi-lsp replay`` of it plays the model
    (its URL in ``PI_TEST_URL``) and is stopped once Emacs exits. Prints ``label`` and the seconds
    taken. Returns the replay's stderr lines (empty without ``session``).
    """
    result = tmp_path / "result.json"
    make_shim(tmp_path / "bin")
    replay = Replay(SESSIONS / session) if session else None
    started = time.monotonic()
    try:
        if replay:
            env = dict(env, PI_TEST_URL=replay.url)
        environment = editor_env(tmp_path, shim_dir=tmp_path / "bin", PI_LSP_EMACS_DIR=str(EMACS_DIR),
                                 PI_TEST_RESULT=str(result), **env)
        rc, data, output = run_editor(
            [emacs, "--batch", "-l", str(EMACS_DIR / "tests" / script)], cwd=ws, env=environment, result=result,
        )
    finally:
        if replay:
            replay.stop()
    assert_passed(rc, data, output, replay)
    print(f"{label}: {time.monotonic() - started:.1f} s")
    return replay.stderr if replay else []


@pytest.mark.parametrize("with_eglot", [False, True], ids=["alone", "beside-eglot-pylsp"])
def test_every_buffer_synced_edits_land_in_buffers(tmp_path: Path, with_eglot: bool) -> None:
    """The scenario alone, and with eglot running python-lsp-server for greet.py all along: pi-lsp.el
    must neither need eglot nor disturb it."""
    emacs = _require("emacs", "emacs-nox")
    extra = {}
    if with_eglot:
        _require("pylsp", "python3-pylsp elpa-eglot")
        extra["PI_TEST_EGLOT_SERVER"] = "pylsp"
    ws = _workspace(tmp_path)
    replay_stderr = _batch_scenario_passes(
        emacs, tmp_path, ws, "pi-lsp-test.el", f"emacs batch scenario ({'with' if with_eglot else 'without'} eglot)",
        session="emacs_edits.jsonl", **extra,
    )
    assert (ws / "greet.py").read_text(encoding="utf-8").endswith('return "ciao"\n')
    assert "- my unsaved note" in (ws / "CHANGELOG.md").read_text(encoding="utf-8")
    assert not [line for line in replay_stderr if "turn" in line], replay_stderr


def test_review_and_rewind_in_the_changes_buffer(tmp_path: Path) -> None:
    """Issue 18 in ``emacs --batch``: a run edits two hunks of an open file and creates one; the
    transcript links to ``*pi-lsp changes*``, whose text is the change set; k keeps a hunk, u reverts
    the other in the file's buffer (one undo brings it back, and g shows it applied again), U on the
    file after the user typed in the kept hunk reverts the other hunk, reports a conflict and keeps
    the user's text, T (after asking) reverts the turn:
    the created file goes, the conflict stays; C-u shows the session ``external``."""
    emacs = _require("emacs", "emacs-nox")
    ws = _workspace(tmp_path, NOTES)
    _batch_scenario_passes(emacs, tmp_path, ws, "pi-lsp-changes-test.el", "emacs review and rewind",
                           session="emacs_changes.jsonl")
    assert not (ws / "made.txt").exists()


def test_review_before_apply_in_a_diff_buffer(tmp_path: Path) -> None:
    """pi.edit.review "before" in Emacs (issue 18): the edit comes up in ``*pi-lsp review notes.txt*``
    as a diff-mode buffer; ``a`` accepts the first hunk, ``R`` rejects the second with a reason and
    sends; only the accepted hunk lands; ``X`` rejects the write that follows, creating nothing."""
    emacs = _require("emacs", "emacs-nox")
    ws = _workspace(tmp_path, NOTES)
    _batch_scenario_passes(emacs, tmp_path, ws, "pi-lsp-review-test.el", "emacs review before apply",
                           session="emacs_review.jsonl")
    assert (ws / "notes.txt").read_text(encoding="utf-8") == "ONE\ntwo\nthree\nfour\nfive\n"
    assert not (ws / "made.txt").exists()


def test_unit_positions_changes_edits_transcript(tmp_path: Path) -> None:
    """ERT (no server): positions in UTF-16 and UTF-32, LSP line breaks, the incremental didChange
    records replayed against the buffer, multi-range edits, a stale version refused, transcript lines."""
    emacs = _require("emacs", "emacs-nox")
    completed = subprocess.run(
        ["timeout", str(EDITOR_TIMEOUT_SECONDS), emacs, "--batch", "-Q", "-L", str(EMACS_DIR), "-l", "ert",
         "-l", str(EMACS_DIR / "tests" / "pi-lsp-unit-test.el"), "-f", "ert-run-tests-batch-and-exit"],
        env=editor_env(tmp_path, shim_dir=None), stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=EDITOR_TIMEOUT_SECONDS + 30,
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0 and "0 unexpected" in output, output[-6000:]


def test_byte_compiles_without_warnings(tmp_path: Path) -> None:
    """Every pi-lsp*.el compiles on this Emacs with warnings as errors (unknown functions, free
    variables, wrong arities), docstring width aside; the .elc files go to a temp folder."""
    emacs = _require("emacs", "emacs-nox")
    files = sorted(str(p) for p in EMACS_DIR.glob("pi-lsp*.el"))
    setup = (
        "(setq byte-compile-docstring-max-column 1000 byte-compile-error-on-warn t"
        f" byte-compile-dest-file-function (lambda (f) (expand-file-name (concat (file-name-nondirectory f) \"c\") {json.dumps(str(tmp_path))})))"
    )
    completed = subprocess.run(
        ["timeout", str(EDITOR_TIMEOUT_SECONDS), emacs, "--batch", "-Q", "-L", str(EMACS_DIR), "--eval", setup,
         "-f", "batch-byte-compile", *files],
        env=editor_env(tmp_path, shim_dir=None), stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=EDITOR_TIMEOUT_SECONDS + 30,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert len(list(tmp_path.glob("*.elc"))) == len(files) >= 6
    assert not list(EMACS_DIR.glob("*.elc"))


class Tmux:
    """One ``emacs -nw`` in a private tmux server (its own socket): the screen as text, keys typed."""

    def __init__(self, tmp_path: Path, argv: list[str], *, cwd: Path, env: dict[str, str]) -> None:
        self.tmux = _require("tmux", "tmux")
        self.socket = str(tmp_path / "tmux.sock")
        env = dict(env, TERM="xterm-256color")
        command = " ".join(shlex.quote(part) for part in ["cd", str(cwd)]) + " && exec " + shlex.join(argv)
        subprocess.run([self.tmux, "-S", self.socket, "-f", "/dev/null", "new-session", "-d", "-x", "110", "-y", "45",
                        "-s", "pi", command], env=env, check=True, timeout=30)

    def screen(self) -> str:
        """The visible screen, one line per row."""
        done = subprocess.run([self.tmux, "-S", self.socket, "capture-pane", "-p", "-t", "pi"],
                              capture_output=True, text=True, timeout=30)
        return done.stdout

    def keys(self, *keys: str) -> None:
        subprocess.run([self.tmux, "-S", self.socket, "send-keys", "-t", "pi", *keys], check=True, timeout=30)

    def wait_for(self, predicate: Callable[[str], bool], what: str, seconds: float = 60) -> str:
        """Poll the screen until ``predicate(screen)``; fail with the last screen after ``seconds``."""
        started = time.monotonic()
        deadline = started + seconds
        screen = self.screen()
        while not predicate(screen):
            if time.monotonic() > deadline:
                raise AssertionError(f"the screen never showed {what}:\n{screen}")
            time.sleep(0.1)
            screen = self.screen()
        print(f"  screen showed {what} after {time.monotonic() - started:.1f} s")
        return screen

    def running(self) -> bool:
        """Whether the program still runs (its tmux session ends when it exits)."""
        done = subprocess.run([self.tmux, "-S", self.socket, "has-session", "-t", "pi"], capture_output=True, timeout=30)
        return done.returncode == 0

    def close(self) -> None:
        subprocess.run([self.tmux, "-S", self.socket, "kill-server"], capture_output=True, timeout=30)


PROMPT_MARK = "(no default; C-g: Deny)"


def test_approvals_in_a_terminal(tmp_path: Path) -> None:
    """A person at ``emacs -nw``: C-g denies at once, "Allow once" runs the command, a question the
    server stops waiting for closes by itself, and so does one whose server dies; the transcript
    says what happened."""
    emacs = _require("emacs", "emacs-nox")
    _require("tmux", "tmux")
    ws = _workspace(tmp_path, {"notes.txt": "notes\n"})
    for folder in ("build", "build2", "build3"):
        (ws / folder).mkdir()
        (ws / folder / "out.o").write_text("x", encoding="utf-8")
    result = tmp_path / "result.json"
    make_shim(tmp_path / "bin")
    replay = Replay(SESSIONS / "emacs_approvals.jsonl")
    started = time.monotonic()
    env = editor_env(tmp_path, shim_dir=tmp_path / "bin", PI_LSP_EMACS_DIR=str(EMACS_DIR),
                     PI_TEST_URL=replay.url, PI_TEST_RESULT=str(result))
    tty = Tmux(tmp_path, ["timeout", str(EDITOR_TIMEOUT_SECONDS), emacs, "-nw", "-Q", "-l",
                          str(EMACS_DIR / "tests" / "pi-lsp-tty-test.el")], cwd=ws, env=env)
    try:
        # question 1: C-g
        screen = tty.wait_for(lambda s: PROMPT_MARK in s, "the first approval prompt")
        assert "Run bash: rm -rf build" in screen and "pi:waiting for you" in screen, screen
        tty.keys("C-g")
        screen = tty.wait_for(lambda s: "you denied it" in s, "the denial in the transcript")
        # question 2: typed answer
        screen = tty.wait_for(lambda s: PROMPT_MARK in s, "the second approval prompt")
        tty.keys("Allow once", "Enter")
        tty.wait_for(lambda s: "you allowed it once" in s, "the allowance in the transcript")
        # question 3 (prompt 2, 2 s timeout): nobody answers; the prompt closes by itself
        tty.wait_for(lambda s: "rm -rf build2" in s and PROMPT_MARK in s, "the third approval prompt")
        screen = tty.wait_for(lambda s: "Approval timed out after 2 s: denied" in s and PROMPT_MARK not in s,
                              "the withdrawn prompt closed")
        # question 4 (prompt 3): the server dies while it is open; the prompt closes
        tty.wait_for(lambda s: "rm -rf build3" in s and PROMPT_MARK in s, "the fourth approval prompt")
        pid_file = Path(str(result) + ".pid")
        tty.wait_for(lambda s: pid_file.exists() and pid_file.read_text().strip() != "", "the server pid written")
        os.kill(int(pid_file.read_text()), signal.SIGKILL)
        tty.wait_for(lambda s: "the server ended" in s and PROMPT_MARK not in s, "the prompt closed with the server")
        for _ in range(600):
            if result.exists():
                break
            time.sleep(0.1)
        final = tty.screen()
        data = json.loads(result.read_text(encoding="utf-8")) if result.exists() else {}
    finally:
        tty.close()
        replay.stop()
    assert_passed(0, data, final, replay)
    assert not (ws / "build").exists() and (ws / "build2").exists() and (ws / "build3").exists()
    assert PROMPT_MARK not in final and "pi:waiting for you" not in final, final
    assert not [line for line in replay.stderr if "turn" in line], replay.stderr
    print(f"emacs tty approvals: {time.monotonic() - started:.1f} s\n{final}")


def test_steer_queue_stop_and_cancel_while_the_agent_runs(tmp_path: Path) -> None:
    """Issue 19 in ``emacs --batch``: prompts written during a long bash call are cancelled,
    steered and queued through the real ``read-multiple-choice``; each reaches the model when it
    should (the replay checks each request, the journal lists every user message sent)."""
    emacs = _require("emacs", "emacs-nox")
    ws = _workspace(tmp_path, {"notes.txt": "notes\n"})
    replay_stderr = _batch_scenario_passes(emacs, tmp_path, ws, "pi-lsp-steering-test.el", "emacs steering",
                                           session="steering.jsonl")
    assert not [line for line in replay_stderr if "turn" in line], replay_stderr
    assert journal_user_messages(tmp_path / "journals") == ["run the job", "use staging", "then run the tests", "second job"]


def test_invalid_settings_in_one_message_and_a_prompt_from_outside_names_its_workspace(tmp_path: Path) -> None:
    """Several invalid settings come up as one message, a prompt says pi.model is invalid (not
    "not set"), and a prompt from a file outside any project names the project it went to."""
    emacs = _require("emacs", "emacs-nox")
    ws = _workspace(tmp_path)
    outside = tmp_path / "x" / "a.txt"
    outside.parent.mkdir()
    outside.write_text("notes\n", encoding="utf-8")
    _batch_scenario_passes(emacs, tmp_path, ws, "pi-lsp-outside-test.el", "emacs outside/settings",
                           PI_TEST_OUTSIDE=str(outside))


def test_quitting_emacs_at_an_approval_prompt_quits(tmp_path: Path) -> None:
    """C-x C-c while an approval waits in the minibuffer: after "exit anyway? yes" Emacs exits.
    It used to stay open: shutting the server down withdrew the question, and the withdrawal's
    throw out of the minibuffer unwound `kill-emacs' itself."""
    emacs = _require("emacs", "emacs-nox")
    ws = _workspace(tmp_path, {"notes.txt": "notes\n"})
    (ws / "build").mkdir()
    make_shim(tmp_path / "bin")
    replay = Replay(SESSIONS / "emacs_approvals.jsonl")
    env = editor_env(tmp_path, shim_dir=tmp_path / "bin", PI_LSP_EMACS_DIR=str(EMACS_DIR),
                     PI_TEST_URL=replay.url, PI_TEST_RESULT=str(tmp_path / "result.json"))
    tty = Tmux(tmp_path, ["timeout", str(EDITOR_TIMEOUT_SECONDS), emacs, "-nw", "-Q", "-l",
                          str(EMACS_DIR / "tests" / "pi-lsp-tty-test.el")], cwd=ws, env=env)
    try:
        tty.wait_for(lambda s: PROMPT_MARK in s, "the first approval prompt")
        tty.keys("C-x", "C-c")
        deadline = time.monotonic() + 60
        while tty.running() and "exit anyway?" not in tty.screen() and time.monotonic() < deadline:
            time.sleep(0.1)
        if tty.running() and "exit anyway?" in tty.screen():  # a process that asks before it is killed
            tty.keys("yes", "Enter")
        while tty.running() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not tty.running(), f"Emacs is still running:\n{tty.screen()}"
    finally:
        tty.close()
        replay.stop()
    assert (ws / "build").exists()  # the question was never answered: nothing ran
