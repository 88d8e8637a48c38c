"""Session journals, resuming a journaled session, AGENTS.md and provider settings for a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pi_lsp.daemon.agent_sessions import MAX_CONTEXT_BYTES, AgentSessions, context_files, provider_settings
from pi_lsp.llm.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage, to_wire
from pi_lsp.daemon.session_journal import SESSIONS_DIR_ENV, SessionJournal, load_messages, sessions_dir
from pi_lsp.daemon.settings import parse_settings


def test_journal_lines_and_round_trip(tmp_path: Path) -> None:
    journal = SessionJournal("abc-1", Path("/w"), tmp_path)
    messages = [
        UserMessage(content="fix é"),
        AssistantMessage(content=[TextContent(text="ok"), ToolCall(id="c", name="read", arguments={"path": "a"})], stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="c", tool_name="read", content=[TextContent(text="x")]),
    ]
    for message in messages:
        journal.message(to_wire(message))
    journal.run_end("stop", None)
    lines = [json.loads(line) for line in (tmp_path / "abc-1.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [line["type"] for line in lines] == ["session", "message", "message", "message", "run_end"]
    assert lines[0]["id"] == "abc-1" and lines[0]["cwd"] == "/w"
    assert lines[1]["message"] == {"role": "user", "content": "fix é", "timestamp": messages[0].timestamp}
    assert load_messages("abc-1", tmp_path) == messages
    # a second journal object on the same id appends, without a second header
    SessionJournal("abc-1", Path("/w"), tmp_path).run_end("error", "boom")
    last = json.loads((tmp_path / "abc-1.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert last["stopReason"] == "error" and last["errorMessage"] == "boom"
    assert sum(1 for line in (tmp_path / "abc-1.jsonl").read_text().splitlines() if '"session"' in line) == 1


def test_bad_journal_lines_are_skipped_and_bad_ids_refused(tmp_path: Path) -> None:
    (tmp_path / "s.jsonl").write_text(
        'not json\n{"type": "message", "message": {"role": "nobody"}}\n'
        '{"type": "message", "message": {"role": "user", "content": "kept"}}\n',
        encoding="utf-8",
    )
    assert [m.content for m in load_messages("s", tmp_path)] == ["kept"]
    assert load_messages("missing", tmp_path) is None
    assert load_messages("../etc/passwd", tmp_path) is None
    with pytest.raises(ValueError):
        SessionJournal("../x", Path("/w"), tmp_path)


def test_an_unwritable_journal_does_not_fail(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    journal = SessionJournal("s", Path("/w"), blocker / "sub")  # a folder under a file
    with caplog.at_level("WARNING", logger="pi_lsp.daemon.session_journal"):
        journal.message({"role": "user", "content": "x"})  # logged, not raised
        journal.message({"role": "user", "content": "y"})
    warnings = [r for r in caplog.records if "cannot write the session journal" in r.getMessage()]
    assert len(warnings) == 1, "journaling stops after the first failure, with one warning"
    assert blocker.read_text() == "x"


def test_sessions_dir_is_overridable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(SESSIONS_DIR_ENV, str(tmp_path))
    assert sessions_dir() == tmp_path
    monkeypatch.delenv(SESSIONS_DIR_ENV)
    assert sessions_dir().parts[-2:] == ("pi-lsp", "sessions")


def test_sessions_resume_from_their_journal(tmp_path: Path) -> None:
    journal = SessionJournal("old", Path("/w"), tmp_path)
    journal.message(to_wire(UserMessage(content="earlier")))
    sessions = AgentSessions(lambda params: None, journal_dir=tmp_path)
    resumed = sessions.session("old")
    assert [m.content for m in resumed.messages] == ["earlier"]
    assert sessions.session("old") is resumed
    fresh = sessions.session("brand-new")
    assert fresh.id == "brand-new" and fresh.messages == []
    assert len(sessions.session(None).id) == 32
    with pytest.raises(ValueError, match="sessionId"):
        sessions.session("no/slashes")
    assert sessions.abort() is False


def test_agents_md_is_read_and_bounded(tmp_path: Path) -> None:
    assert context_files(tmp_path) == []
    (tmp_path / "AGENTS.md").write_text("Run tests with make.\n", encoding="utf-8")
    [context] = context_files(tmp_path)
    assert context.path == "AGENTS.md" and context.content == "Run tests with make.\n"
    (tmp_path / "AGENTS.md").write_bytes(b"x" * (MAX_CONTEXT_BYTES + 10))
    [big] = context_files(tmp_path)
    assert big.content.startswith("x" * 100) and big.content.endswith(f"[AGENTS.md cut at {MAX_CONTEXT_BYTES} bytes]")


def test_provider_settings_come_from_the_pi_settings() -> None:
    settings, problems = parse_settings({
        "baseUrl": "http://127.0.0.1:9/v1", "model": "m", "apiKeyEnv": "KEY", "maxRetries": 1,
        "backoffInitialSeconds": 0.01, "readTimeoutSeconds": 5,
    })
    assert problems == []
    provider = provider_settings(settings)
    assert (provider.base_url, provider.model, provider.api_key_env) == ("http://127.0.0.1:9/v1", "m", "KEY")
    assert (provider.max_retries, provider.backoff_initial_seconds, provider.read_timeout_seconds) == (1, 0.01, 5)
    defaults = provider_settings(parse_settings(None)[0])
    assert defaults.base_url.startswith("http://127.0.0.1") and defaults.api_key_env is None


def test_anthropic_provider_settings_and_defaults() -> None:
    from pi_lsp.daemon.agent_sessions import make_provider, missing_model_settings

    settings, problems = parse_settings({"provider": "anthropic", "model": "claude-sonnet-4-5", "maxTokens": 4096,
                                         "thinking": 2048})
    assert problems == []
    provider = provider_settings(settings)
    assert (provider.base_url, provider.api_key_env) == ("https://api.anthropic.com/v1", "ANTHROPIC_API_KEY")
    assert (provider.max_tokens, provider.thinking_budget) == (4096, 2048)
    assert missing_model_settings(settings) is None
    assert type(make_provider(settings)).__name__ == "AnthropicProvider"
    local, _ = parse_settings({"provider": "anthropic", "model": "m", "baseUrl": "http://127.0.0.1:9/v1"})
    assert provider_settings(local).api_key_env is None
    bad, problems = parse_settings({"provider": "gemini", "thinking": 500, "maxTokens": 0})
    assert bad.provider == "openai" and bad.thinking == 0 and bad.max_tokens is None
    assert len(problems) == 3 and any("at least 1024" in p for p in problems)
    assert type(make_provider(bad)).__name__ == "OpenAICompatProvider"


def test_a_compaction_is_journaled_and_loading_continues_from_the_summary(tmp_path: Path) -> None:
    from pi_lsp.agent.compaction import is_summary_message

    journal = SessionJournal("c1", Path("/w"), tmp_path)
    texts = ["first", "second", "third", "fourth"]
    for text in texts:
        journal.message(to_wire(UserMessage(content=text)))
    journal.compaction({"type": "compaction", "summarized": False, "keptMessages": 4})  # trimming: nothing lasting
    journal.compaction({"type": "compaction", "summarized": True, "summary": "S1", "keptMessages": 2,
                        "tokensBefore": 900, "tokensAfter": 300, "timestamp": 5})
    journal.message(to_wire(UserMessage(content="fifth")))
    loaded = load_messages("c1", tmp_path)
    assert loaded is not None and is_summary_message(loaded[0]) and "S1" in loaded[0].content
    assert loaded[0].timestamp == 5
    assert [m.content for m in loaded[1:]] == ["third", "fourth", "fifth"]
    # a second compaction folds the first summary in
    journal.compaction({"type": "compaction", "summarized": True, "summary": "S2", "keptMessages": 1})
    again = load_messages("c1", tmp_path)
    assert again is not None and "S2" in again[0].content and [m.content for m in again[1:]] == ["fifth"]
    lines = [json.loads(line) for line in journal.path.read_text().splitlines()]
    assert [line["type"] for line in lines].count("compaction") == 2
    assert sum(line["type"] == "message" for line in lines) == 5  # the full history stays in the journal


def test_compaction_settings_defaults_and_overrides() -> None:
    from pi_lsp.daemon.agent_sessions import compaction_settings

    claude = compaction_settings(parse_settings({"model": "anthropic/claude-sonnet-4-5"})[0])
    assert (claude.context_window, claude.reserve_tokens, claude.keep_recent_tokens, claude.enabled) == (200_000, 16384, 20000, True)
    assert compaction_settings(parse_settings({"model": "some-local-model"})[0]).context_window == 128_000
    small, problems = parse_settings({"model": "m", "contextWindow": 8192, "compaction": {"enabled": False, "reserveTokens": 1000, "keepRecentTokens": -1}})
    assert problems and "compaction.keepRecentTokens" in problems[0]
    custom = compaction_settings(small)
    assert (custom.context_window, custom.reserve_tokens, custom.keep_recent_tokens, custom.enabled) == (8192, 1000, 20000, False)
    assert compaction_settings(parse_settings({"contextWindow": 8192})[0]).limit == 4096  # the reserve is capped at half


def test_interrupted_results_close_only_unanswered_calls_of_the_last_reply() -> None:
    from pi_lsp.daemon.session_journal import INTERRUPTED_TEXT, interrupted_results

    calls = AssistantMessage(content=[ToolCall(id="a", name="bash", arguments={}), ToolCall(id="b", name="read", arguments={})],
                             stop_reason="toolUse")
    done = ToolResultMessage(tool_call_id="a", tool_name="bash", content=[TextContent(text="ok")])
    [closer] = interrupted_results([UserMessage(content="go"), calls, done])
    assert (closer.tool_call_id, closer.tool_name, closer.is_error) == ("b", "read", True)
    assert closer.content[0].text == INTERRUPTED_TEXT
    assert interrupted_results([UserMessage(content="go")]) == []
    failed = AssistantMessage(content=calls.content, stop_reason="error", error_message="cut")
    assert interrupted_results([UserMessage(content="go"), failed]) == []  # never ran: repair drops it


def test_list_sessions_filters_by_workspace_and_sorts_by_last_activity(tmp_path: Path) -> None:
    from pi_lsp.daemon.session_journal import FIRST_PROMPT_CHARS, list_sessions

    older = SessionJournal("older", Path("/w"), tmp_path)
    older.message(to_wire(UserMessage(content="  first\n\nprompt  ", timestamp=10)))
    older.message(to_wire(AssistantMessage(content=[TextContent(text="hi")], timestamp=20)))
    newer = SessionJournal("newer", Path("/w"), tmp_path)
    newer.message(to_wire(UserMessage(content=[TextContent(text="x" * 500)], timestamp=30)))
    SessionJournal("other", Path("/elsewhere"), tmp_path).message(to_wire(UserMessage(content="no", timestamp=40)))
    (tmp_path / "junk.jsonl").write_text("{}\n")
    listed = list_sessions(Path("/w"), tmp_path)
    assert [s["id"] for s in listed] == ["newer", "older"]
    assert listed[1]["firstPrompt"] == "first prompt" and (listed[1]["turns"], listed[1]["prompts"]) == (1, 1)
    assert listed[1]["updated"] == 20
    assert len(listed[0]["firstPrompt"]) == FIRST_PROMPT_CHARS and listed[0]["firstPrompt"].endswith("...")
    assert list_sessions(Path("/w"), tmp_path / "missing") == []
