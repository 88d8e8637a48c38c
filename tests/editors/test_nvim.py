"""The Neovim plugin (editors/nvim) in real headless Neovim against the real daemon and
``pi-lsp replay`` (issue 7), each on Neovim 0.7.2 and 0.11.x (issue 15). Each test runs one scenario script of ``editors/nvim/tests/``; the
command line ends in ``cquit 3`` and runs under ``timeout``, so a Lua error or a hang fails."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.editors.editor_support import (
    NEOVIM_VERSIONS,
    NVIM_PLUGIN,
    SESSIONS,
    Replay,
    assert_passed,
    editor_env,
    journal_user_messages,
    make_shim,
    neovim,
    run_editor,
)

SCENARIOS = NVIM_PLUGIN / "tests"


@pytest.fixture(params=NEOVIM_VERSIONS, ids=lambda v: f"nvim{v}")
def nvim(request: pytest.FixtureRequest) -> str:
    """Every test runs on Debian's Neovim 0.7.2 and on 0.11.x (the same scenario files)."""
    return neovim(request.param)


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()  # a root marker
    (ws / "greet.py").write_text('def greet():\n    return "hi"\n\n\ndef bye():\n    return "bye"\n', encoding="utf-8")
    (ws / "closed.txt").write_text("first\nsecond\n", encoding="utf-8")
    (ws / "dirty.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    return ws


def run_scenario(nvim: str, tmp_path: Path, script: str, *, shim: bool = True, after_startup: bool = False,
                 files: dict[str, str] | None = None, **env: str):
    """Run ``editors/nvim/tests/<script>`` in the workspace; ``((rc, result, output), ws)``.

    The command line ends in ``cquit 3``. ``after_startup`` runs the script from the main loop
    after VimEnter instead (Neovim does not fire OptionSet while it starts, i.e. during ``-c``
    commands, and an autocommand callback does not get LSP replies while it waits); then a Lua error
    before the script's own handler is bounded by ``timeout`` (exit 124) rather than ``cquit``.
    ``files`` (relative path -> text) are added to the workspace.
    """
    ws = workspace(tmp_path)
    for name, text in (files or {}).items():
        (ws / name).write_text(text, encoding="utf-8")
    result = tmp_path / "result.json"
    shim_dir = tmp_path / "bin"
    if shim:
        make_shim(shim_dir)
    environment = editor_env(
        tmp_path, shim_dir=shim_dir if shim else None,
        PI_LSP_NVIM_PLUGIN=str(NVIM_PLUGIN), PI_TEST_HELPERS=str(SCENARIOS / "helpers.lua"),
        PI_TEST_RESULT=str(result), PI_TEST_KEY="test-key", **env,
    )
    deferred = f"autocmd VimEnter * ++once lua vim.schedule(function() dofile('{SCENARIOS / script}') end)"
    run = ["-c", deferred] if after_startup else [
        "-c", f"luafile {SCENARIOS / script}", "-c", "cquit 3"]
    argv = [nvim, "--headless", "-u", str(SCENARIOS / "minimal_init.lua"), "-i", "NONE", "-n", *run]
    return run_editor(argv, cwd=ws, env=environment, result=result), ws


def scenario_passes(nvim: str, tmp_path: Path, script: str, *, session: str | None = None,
                    chunk_delay_ms: float = 0, **options: Any) -> tuple[Path, list[str]]:
    """:func:`run_scenario` (``options`` go to it) and assert every check passed; ``(ws, replay stderr lines)``.

    With ``session`` (a file of ``tests/editors/sessions``), ``pi-lsp replay`` of it (chunks
    ``chunk_delay_ms`` apart) plays the model, its URL in ``PI_TEST_URL``, and is stopped once
    Neovim exits; without it the stderr lines are empty.
    """
    replay = Replay(SESSIONS / session, chunk_delay_ms=chunk_delay_ms) if session else None
    try:
        if replay:
            options = dict(options, PI_TEST_URL=replay.url)
        (rc, data, output), ws = run_scenario(nvim, tmp_path, script, **options)
    finally:
        if replay:
            replay.stop()
    assert_passed(rc, data, output, replay)
    return ws, replay.stderr if replay else []


def test_prompt_edits_buffers_and_files_saves_asks_and_undoes(nvim: str, tmp_path: Path) -> None:
    ws, replay_stderr = scenario_passes(nvim, tmp_path, "prompt_edits.lua", session="nvim_edits.jsonl")
    # what the scenario saw, double-checked from outside the editor
    assert (ws / "greet.py").read_text(encoding="utf-8").endswith('return "ciao"\n')
    assert (ws / "closed.txt").read_text(encoding="utf-8") == "first\nSECOND\n"
    assert (ws / "dirty.txt").read_text(encoding="utf-8") == "alpha\nbeta\n"
    assert not [line for line in replay_stderr if "turn" in line], replay_stderr


def test_pi_lsp_missing_from_path(nvim: str, tmp_path: Path) -> None:
    scenario_passes(nvim, tmp_path, "missing_server.lua", shim=False)


def test_server_crash_mid_run(nvim: str, tmp_path: Path) -> None:
    _, replay_stderr = scenario_passes(nvim, tmp_path, "server_crash.lua", session="nvim_crash.jsonl")
    assert not [line for line in replay_stderr if "turn" in line], replay_stderr  # selection sent


def test_prompt_while_another_runs(nvim: str, tmp_path: Path) -> None:
    scenario_passes(nvim, tmp_path, "busy_prompt.lua", session="nvim_busy.jsonl", chunk_delay_ms=150)


def test_reload_documents_before_an_edit(nvim: str, tmp_path: Path) -> None:
    scenario_passes(nvim, tmp_path, "reload.lua", session="nvim_reload.jsonl")


def test_document_state_keeps_a_buffer_marked_modified_unsaved(nvim: str, tmp_path: Path) -> None:
    _, replay_stderr = scenario_passes(nvim, tmp_path, "document_state.lua", session="nvim_state.jsonl",
                                       after_startup=True)
    assert not [line for line in replay_stderr if "turn" in line], replay_stderr


def test_approval_prompt_esc_denies_at_once_and_read_only_has_a_default(nvim: str, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("notes from outside\n", encoding="utf-8")
    ws, replay_stderr = scenario_passes(nvim, tmp_path, "approvals.lua", session="nvim_approvals.jsonl")
    assert not (ws / "denied.txt").exists()
    assert not [line for line in replay_stderr if "turn" in line], replay_stderr


@pytest.mark.parametrize("script", [
    "typeahead_approval.lua",  # keys typed as the prompt appears
    "typeahead_armed.lua",  # a : command typed over the armed prompt
])
def test_keys_typed_over_the_approval_prompt_are_not_answers_and_land_where_typed(
        nvim: str, tmp_path: Path, script: str) -> None:
    (tmp_path / "outside.txt").write_text("notes from outside\n", encoding="utf-8")
    ws, _ = scenario_passes(nvim, tmp_path, script, session="nvim_approvals.jsonl", after_startup=True)
    assert not (ws / "denied.txt").exists()


def test_a_float_withdrawn_before_it_is_armed_gives_the_held_keys_back(nvim: str, tmp_path: Path) -> None:
    scenario_passes(nvim, tmp_path, "typeahead_withdrawn.lua")


def test_approval_prompt_closes_on_the_server_timeout(nvim: str, tmp_path: Path) -> None:
    ws, replay_stderr = scenario_passes(nvim, tmp_path, "approval_timeout.lua", session="nvim_approval_timeout.jsonl")
    assert not (ws / "late.txt").exists()
    assert not [line for line in replay_stderr if "turn" in line], replay_stderr


def test_killing_neovim_while_the_approval_prompt_waits_raises_no_error(nvim: str, tmp_path: Path) -> None:
    """SIGTERM (a closed terminal) during the prompt: Neovim 0.7 ran the server's last events
    while it went down, and the transcript wrote into a buffer Neovim had closed already
    (E440: undo line missing, start_row out of bounds). No transcript function raises now."""
    replay = Replay(SESSIONS / "nvim_approval_killed.jsonl")
    try:
        (rc, data, output), ws = run_scenario(nvim, tmp_path, "approval_killed.lua", PI_TEST_URL=replay.url)
    finally:
        replay.stop()
    assert data.get("checks") and not data.get("failed"), (data, output[-3000:])
    assert rc == 1 and "SIGTERM" in output, (rc, output[-3000:])  # the signal ended it
    errors = tmp_path / "result.json.errors"
    assert not errors.exists(), errors.read_text(encoding="utf-8")
    assert "Error" not in output, output[-3000:]
    assert not (ws / "killed.txt").exists()


def test_a_transcript_deleted_during_a_run_starts_afresh(nvim: str, tmp_path: Path) -> None:
    _, replay_stderr = scenario_passes(nvim, tmp_path, "transcript_deleted.lua", session="nvim_transcript_deleted.jsonl")
    assert not [line for line in replay_stderr if "turn" in line], replay_stderr


def test_transcript_folds_diffs_live_output_and_the_prompt_buffer(nvim: str, tmp_path: Path) -> None:
    ws, replay_stderr = scenario_passes(nvim, tmp_path, "transcript.lua", session="nvim_transcript.jsonl")
    assert 'return "hello"' in (ws / "greet.py").read_text(encoding="utf-8")
    assert not [line for line in replay_stderr if "turn" in line], replay_stderr


def test_pi_changes_lists_keeps_and_undoes_hunks_without_forcing_a_conflict(nvim: str, tmp_path: Path) -> None:
    ws, _ = scenario_passes(nvim, tmp_path, "changes.lua", session="nvim_changes.jsonl")
    assert not (ws / "notes.txt").exists()  # T deleted the file the agent created


def test_a_prompt_without_a_model_says_why_in_the_transcript(nvim: str, tmp_path: Path) -> None:
    scenario_passes(nvim, tmp_path, "no_model.lua")


def test_review_before_apply_accepts_and_rejects_hunks_in_the_float(nvim: str, tmp_path: Path) -> None:
    ws, _ = scenario_passes(nvim, tmp_path, "review.lua", session="nvim_review.jsonl")
    assert (ws / "greet.py").read_text(encoding="utf-8") == 'def greet():\n    return "hello"\n\n\ndef bye():\n    return "bye"\n'
    assert not (ws / "notes.txt").exists()


def test_keys_typed_as_the_review_appears_decide_nothing_and_land_where_typed(nvim: str, tmp_path: Path) -> None:
    ws, _ = scenario_passes(nvim, tmp_path, "typeahead_review.lua", session="nvim_review.jsonl", after_startup=True)
    assert not (ws / "notes.txt").exists()
    assert 'return "bye"' in (ws / "greet.py").read_text(encoding="utf-8")


def test_a_review_nobody_answers_is_withdrawn_and_writes_nothing(nvim: str, tmp_path: Path) -> None:
    ws, _ = scenario_passes(nvim, tmp_path, "review_timeout.lua", session="nvim_review_timeout.jsonl")
    assert 'return "hi"' in (ws / "greet.py").read_text(encoding="utf-8")


def test_pi_changes_p_undoes_only_the_last_prompt(nvim: str, tmp_path: Path) -> None:
    ws, _ = scenario_passes(nvim, tmp_path, "prompt_undo.lua", session="nvim_prompts.jsonl")
    assert 'return "hello"' in (ws / "greet.py").read_text(encoding="utf-8")


def test_steer_queue_and_cancel_a_prompt_while_the_agent_runs(nvim: str, tmp_path: Path) -> None:
    _, replay_stderr = scenario_passes(nvim, tmp_path, "steering.lua", session="steering.jsonl")
    assert not [line for line in replay_stderr if "turn" in line], replay_stderr  # each request carried its message
    users = journal_user_messages(tmp_path / "journals")
    # the cancelled draft, "stop here" and the undelivered message never reached the model
    assert users == ["run the job", "use staging", "then run the tests", "second job"], users


def test_invalid_settings_are_all_shown_once_and_pi_says_the_model_is_invalid(nvim: str, tmp_path: Path) -> None:
    scenario_passes(nvim, tmp_path, "invalid_settings.lua")


def test_bad_setup_options_are_reported_once_and_the_valid_ones_kept(nvim: str, tmp_path: Path) -> None:
    scenario_passes(nvim, tmp_path, "bad_setup.lua")


def test_a_prompt_from_a_file_outside_names_the_workspace_it_went_to(nvim: str, tmp_path: Path) -> None:
    outside = tmp_path / "x" / "a.txt"
    outside.parent.mkdir()
    outside.write_text("notes\n", encoding="utf-8")
    scenario_passes(nvim, tmp_path, "outside_workspace.lua", PI_TEST_OUTSIDE=str(outside))


def test_invalid_settings_are_all_on_screen_at_once(nvim: str, tmp_path: Path) -> None:
    """A person at Neovim in a terminal (tmux): every invalid setting is on the screen together,
    and :Pi then says pi.model is invalid."""
    from tests.editors.test_emacs import Tmux

    ws = workspace(tmp_path)
    make_shim(tmp_path / "bin")
    env = editor_env(tmp_path, shim_dir=tmp_path / "bin", PI_LSP_NVIM_PLUGIN=str(NVIM_PLUGIN))
    tty = Tmux(tmp_path, ["timeout", "90", nvim, "-u", str(SCENARIOS / "minimal_init.lua"), "-i", "NONE", "-n",
                          "-c", f"luafile {SCENARIOS / 'invalid_settings_tty.lua'}"], cwd=ws, env=env)
    names = ("pi.model:", "pi.maxTurns:", "pi.edit.review:", "pi.bash.sandbox:", "pi.activeTools:")
    try:
        screen = tty.wait_for(lambda s: all(n in s for n in names), "every invalid setting")
        assert "5 problems in the pi settings:" in screen, screen
        tty.keys("Enter")
        tty.keys(":Pi fix it", "Enter")
        screen = tty.wait_for(lambda s: "pi.model is invalid: Input should be a valid string (got 5)" in s.replace("\n", ""),
                              "the refusal naming the invalid model")
        assert "not set" not in screen, screen
        tty.keys(":qa!", "Enter")
    finally:
        tty.close()
