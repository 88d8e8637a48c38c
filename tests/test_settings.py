"""pi settings: camelCase, an unknown key reported and ignored, a bad value reported and replaced by its default."""

from __future__ import annotations

from pi_lsp.daemon.settings import Settings, parse_settings


def test_null_means_defaults_silently() -> None:
    settings, problems = parse_settings(None)
    assert settings == Settings() and problems == []
    assert settings.edit.apply_timeout_seconds == 30.0
    assert settings.edit.verify_timeout_seconds == 2.0
    assert settings.bash.timeout_seconds == 600.0
    assert settings.max_turns == 50


def test_camel_case_keys_and_unknown_keys_reported_and_ignored() -> None:
    settings, problems = parse_settings(
        {
            "edit": {"route": "openDocuments", "applyTimeoutSeconds": 0.5, "mystery": 1},
            "bash": {"timeoutSeconds": 3},
            "activeTools": ["read", "ls"],
            "baseUrl": "http://127.0.0.1:1/v1",
            "notASetting": {"x": 1},
        }
    )
    assert problems == ["pi.edit.mystery: unknown setting, ignored", "pi.notASetting: unknown setting, ignored"]
    assert settings.edit.route == "openDocuments"
    assert settings.edit.apply_timeout_seconds == 0.5
    assert settings.edit.verify_timeout_seconds == 2.0
    assert settings.bash.timeout_seconds == 3
    assert settings.active_tools == ["read", "ls"]
    assert settings.base_url == "http://127.0.0.1:1/v1"
    assert settings.rejection("pi.edit.mystery") is None  # not a rejected value: nothing replaced


def test_a_misspelt_key_names_the_setting_meant_and_leaves_the_right_one_alone() -> None:
    settings, problems = parse_settings({"edit": {"reveiw": "before"}, "modle": "m", "review": "before"})
    assert settings.edit.review == "after" and settings.model is None
    assert problems == [
        "pi.edit.reveiw: unknown setting, ignored; did you mean pi.edit.review?",
        "pi.modle: unknown setting, ignored; did you mean pi.model?",
        "pi.review: unknown setting, ignored; did you mean pi.edit.review?",  # in the wrong place
    ]
    settings, problems = parse_settings({"edit": {"reveiw": "before", "review": "before"}})
    assert settings.edit.review == "before" and len(problems) == 1
    settings, problems = parse_settings({"edit.review": "before", "changes": {"maxFileBytez": 1}})
    assert settings.edit.review == "after"
    assert sorted(problems) == [
        "pi.changes.maxFileBytez: unknown setting, ignored; did you mean pi.changes.maxFileBytes?",
        'pi: unknown setting "edit.review", ignored; did you mean pi.edit.review? Write it nested: {"edit": {"review": ...}}',
    ]


def test_every_section_is_checked_field_by_field() -> None:
    # changes was reported as one "pi.changes" (and its valid fields dropped with the bad ones)
    settings, problems = parse_settings(
        {"changes": {"maxFileBytes": -1, "maxTotalBytes": "lots", "gitTimeoutSeconds": 2},
         "compaction": {"reserveTokens": -5, "enabled": False}, "nudge": {"trailing": "x"}}
    )
    assert [p.split(":")[0] for p in problems] == [
        "pi.changes.maxFileBytes", "pi.changes.maxTotalBytes", "pi.compaction.reserveTokens", "pi.nudge.trailing",
    ]
    assert settings.changes.git_timeout_seconds == 2 and settings.changes.max_file_bytes == 8 << 20
    assert settings.compaction.enabled is False and settings.compaction.reserve_tokens == 16384
    assert settings.rejection("pi.changes.maxTotalBytes") is not None


def test_invalid_values_fall_back_to_their_default_and_keep_the_rest() -> None:
    settings, problems = parse_settings(
        {
            "edit": {"applyTimeoutSeconds": -1, "verifyTimeoutSeconds": 0.1, "route": "sideways"},
            "maxTurns": "many",
            "activeTools": ["read", 7],
            "bash": "fast",
        }
    )
    assert settings.edit.apply_timeout_seconds == 30.0
    assert settings.edit.route is None
    assert settings.edit.verify_timeout_seconds == 0.1  # the valid neighbour is kept
    assert settings.max_turns == 50
    assert settings.active_tools is None
    assert settings.bash.timeout_seconds == 600.0
    joined = "\n".join(problems)
    for name in ("pi.edit.applyTimeoutSeconds", "pi.edit.route", "pi.maxTurns", "pi.activeTools", "pi.bash"):
        assert name in joined
    assert len(problems) == 5
    assert all("using the default" in p for p in problems)


def test_a_section_that_is_not_an_object_is_reported() -> None:
    settings, problems = parse_settings(["edit"])
    assert settings == Settings()
    assert len(problems) == 1 and "must be an object" in problems[0]


def test_rejected_values_say_why_and_a_rejected_model_is_invalid_not_unset() -> None:
    from pi_lsp.daemon.agent_sessions import missing_model_settings

    settings, problems = parse_settings({"model": 5, "baseUrl": "http://127.0.0.1:9/v1", "edit": {"review": "x"}})
    assert settings.rejection("pi.model") == "Input should be a valid string (got 5)"
    assert settings.rejection("pi.edit.review") is not None and "'x'" in settings.rejection("pi.edit.review")
    assert settings.rejection("pi.baseUrl") is None
    assert problems[0] == "pi.model: Input should be a valid string (got 5); using the default"
    missing = missing_model_settings(settings)
    assert missing is not None and "pi.model is invalid: Input should be a valid string (got 5)." in missing
    assert "not set" not in missing
    settings, _ = parse_settings({"model": ["gpt"]})
    missing = missing_model_settings(settings)
    assert missing is not None and "pi.model is invalid: " in missing and "pi.baseUrl is not set" in missing
    assert "pi.baseUrl and pi.model are not set" in (missing_model_settings(parse_settings({})[0]) or "")


def test_a_base_url_without_http_scheme_is_invalid() -> None:
    from pi_lsp.daemon.agent_sessions import missing_model_settings

    settings, problems = parse_settings({"baseUrl": "localhost:11434/v1", "model": "m"})
    assert settings.base_url is None and len(problems) == 1 and problems[0].startswith("pi.baseUrl: ")
    assert "http://" in problems[0] and "'localhost:11434/v1'" in problems[0]
    missing = missing_model_settings(settings) or ""
    assert "pi.baseUrl is invalid: " in missing and "not set" not in missing
    for good in ("http://127.0.0.1:9/v1", "HTTPS://api.example.com/v1"):
        assert parse_settings({"baseUrl": good})[0].base_url == good
