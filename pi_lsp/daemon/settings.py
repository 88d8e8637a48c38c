"""The ``pi`` settings section (design.md section 5).

Sources, in order: ``initializationOptions.pi``, then ``workspace/configuration`` (section ``pi``)
on ``initialized`` and on every ``workspace/didChangeConfiguration``. Keys are camelCase on the
wire, ``null`` means "all defaults" (silently). A value that does not validate is reported (the
daemon shows the messages with ``window/showMessage``) and replaced by its default; an unknown
key (a misspelt one, ``edit.reveiw``) is reported, with the setting probably meant, and ignored;
the other values are kept. Every timeout is in **seconds** and is a setting so tests
can make it small.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from pi_lsp.daemon.read_nudge import DEFAULT_AFTER_SECONDS, DEFAULT_TRAILING
from pi_lsp.daemon.setting_paths import sections, unknown_key_message


class _Section(BaseModel):
    # extra="forbid": an unknown key is a validation error, which parse_settings reports and drops
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class EditSection(_Section):
    """``pi.edit``: the edit path through the editor (design.md sections 3 and 4).

    ``route``: for files the editor has not opened, ``"editor"`` or ``"openDocuments"``;
    ``None`` picks the default from the client's capabilities. ``review`` (issue 18): ``after``
    (edits land at once, reviewed afterwards with ``pi/changes``) or ``before`` (each edit or
    write is proposed and waits up to ``reviewTimeoutSeconds`` for the user's per-hunk decisions,
    :mod:`pi_lsp.changes.review_before`).
    """

    route: Literal["editor", "openDocuments"] | None = None
    apply_timeout_seconds: float = Field(30.0, gt=0)
    verify_timeout_seconds: float = Field(2.0, ge=0)
    review: Literal["after", "before"] = "after"
    review_timeout_seconds: float = Field(600.0, gt=0)


class BashSection(_Section):
    """``pi.bash``: ``timeoutSeconds`` is the default timeout of a bash call (``None``: none);
    ``sandbox``: how commands allowed without asking run (:mod:`pi_lsp.policy.sandbox`):
    ``auto`` in bubblewrap when it works here, ``required`` (no working sandbox: every command
    asks), ``off``."""

    timeout_seconds: float | None = Field(600.0, gt=0)
    sandbox: Literal["auto", "required", "off"] = "auto"


class ApprovalsSection(_Section):
    """``pi.approvals`` (design.md section 8): rules, how long to wait for the user, fallback;
    ``commandCheckTimeoutSeconds`` bounds judging one bash command (bash expanding its words)."""

    rules: list[dict[str, Any]] = Field(default_factory=list)
    timeout_seconds: float = Field(120.0, gt=0)
    fallback: Literal["allow", "deny"] = "deny"
    command_check_timeout_seconds: float = Field(5.0, gt=0)


class ChangesSection(_Section):
    """``pi.changes`` (issue 18): the change journal's budget for before-contents, in bytes.

    A file over ``maxFileBytes``, or one that would take the session's store over
    ``maxTotalBytes``, is recorded as not restorable.
    """

    max_file_bytes: int = Field(8 << 20, ge=0)
    max_total_bytes: int = Field(512 << 20, ge=0)
    git_timeout_seconds: float = Field(10.0, gt=0)
    """Limit of each git call that finds clean tracked files (their content is read back from
    git instead of copied); past it the snapshot copies them as without git."""
    blob_grace_minutes: float = Field(60.0, ge=0)
    """Blobs no journal references are collected (at start, and when the budget is reached)
    only once they are this old (:mod:`pi_lsp.changes.blob_gc`)."""
    confirm_timeout_seconds: float = Field(30.0, gt=0)
    """The longest a reader of the journal (``pi/changes``, a revert, the next ``bash``, shutdown)
    waits for the confirmation walk after a ``bash`` call (:mod:`pi_lsp.changes.pending`)."""


class LanguageServerSection(_Section):
    """``pi.languageServer`` (issue 17): ``timeoutSeconds`` bounds each question pi-lsp asks the
    editor's language servers (``pi/languageRequest``, ``pi/diagnostics``); then it cancels it."""

    timeout_seconds: float = Field(10.0, gt=0)


class DiagnosticsSection(_Section):
    """``pi.diagnostics`` (issue 17): after ``edit``/``write``, wait for the editor's diagnostics of
    the file to settle and report the problems the change introduced (``afterEdit``). The wait is
    bounded by ``settleSeconds``; settled means no change for ``quietSeconds``; at most
    ``maxItems`` problems are listed."""

    after_edit: bool = True
    settle_seconds: float = Field(2.0, ge=0)
    quiet_seconds: float = Field(0.3, ge=0)
    max_items: int = Field(20, ge=1)


class CompactionSection(_Section):
    """``pi.compaction`` (:mod:`pi_lsp.agent.compaction`): ``enabled``; ``reserveTokens`` kept free
    for the reply (compaction starts above ``contextWindow - reserveTokens``); ``keepRecentTokens``
    of recent conversation kept verbatim."""

    enabled: bool = True
    reserve_tokens: int = Field(16384, ge=0)
    keep_recent_tokens: int = Field(20000, ge=0)


class NudgeSection(_Section):
    """``pi.nudge`` (:mod:`pi_lsp.daemon.read_nudge`): once the output has been quiet for
    ``afterSeconds`` (0: never), write ``$/pi/nudge`` while a request to the client is unanswered,
    and ``trailing`` times after messages written right after a response, so that a client that
    stops reading after a reply (Emacs 28's jsonrpc.el) handles what it left."""

    after_seconds: float = Field(DEFAULT_AFTER_SECONDS, ge=0)
    trailing: int = Field(DEFAULT_TRAILING, ge=0)


class Settings(_Section):
    """Every ``pi.*`` setting with its default.

    Provider fields mirror ``pi_lsp.llm`` ``ProviderSettings`` (retries, backoff and timeouts in
    seconds); ``activeTools`` ``None`` means Pi's default active set.

    ``provider``: ``openai`` (any OpenAI-compatible chat completions endpoint) or ``anthropic``
    (the Messages API; ``baseUrl`` then defaults to ``https://api.anthropic.com/v1`` and, for that
    URL, ``apiKeyEnv`` to ``ANTHROPIC_API_KEY``). ``maxTokens``: the reply's token limit (unset:
    the server's default; Anthropic, which needs one, gets 16384 plus the thinking budget).
    ``thinking``: Anthropic's extended-thinking budget in tokens, 0 (off) or at least 1024 (the
    API's minimum). ``contextWindow``: the model's window in tokens (unset: a known default for
    common models, else 128000; :mod:`pi_lsp.llm.context_windows`).
    """

    provider: Literal["openai", "anthropic"] = "openai"
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    active_tools: list[str] | None = None
    max_turns: int = Field(50, ge=1)
    edit: EditSection = Field(default_factory=EditSection)
    bash: BashSection = Field(default_factory=BashSection)
    approvals: ApprovalsSection = Field(default_factory=ApprovalsSection)
    changes: ChangesSection = Field(default_factory=ChangesSection)
    protected_paths: list[str] = Field(default_factory=list)
    max_retries: int = Field(3, ge=0)
    backoff_initial_seconds: float = Field(1.0, ge=0)
    backoff_max_seconds: float = Field(30.0, ge=0)
    connect_timeout_seconds: float = Field(10.0, gt=0)
    read_timeout_seconds: float = Field(120.0, gt=0)
    progress_timeout_seconds: float = Field(600.0, gt=0)
    external_socket: bool = True
    """Serve other local agents (``pi-lsp mcp``) on the private per-user socket (read at ``initialize``)."""
    max_tokens: int | None = Field(None, gt=0)
    thinking: int = Field(0, ge=0)
    context_window: int | None = Field(None, gt=0)
    compaction: CompactionSection = Field(default_factory=CompactionSection)
    language_server: LanguageServerSection = Field(default_factory=LanguageServerSection)
    diagnostics: DiagnosticsSection = Field(default_factory=DiagnosticsSection)
    nudge: NudgeSection = Field(default_factory=NudgeSection)
    _rejected: dict[str, str] = PrivateAttr(default_factory=dict)
    _unknown: list[str] = PrivateAttr(default_factory=list)

    def rejection(self, name: str) -> str | None:
        """Why the client's value of ``name`` (dotted, e.g. ``"pi.model"``) was rejected by
        :func:`parse_settings` and replaced by its default, e.g. ``"Input should be a valid string
        (got 5)"``; ``None`` when it was accepted or not given."""
        return self._rejected.get(name)

    @property
    def unknown_key_problems(self) -> list[str]:
        """The messages :func:`parse_settings` gave for unknown keys (also in its problems), so
        that the daemon can report each key once while it stays in the client's settings."""
        return list(self._unknown)

    @field_validator("base_url")
    @classmethod
    def _base_url_scheme(cls, value: str | None) -> str | None:
        if value and not value.lower().startswith(("http://", "https://")):
            raise ValueError("the base URL must start with http:// or https://, e.g. http://127.0.0.1:11434/v1")
        return value

    @field_validator("thinking")
    @classmethod
    def _thinking_minimum(cls, value: int) -> int:
        if 0 < value < 1024:
            raise ValueError("the thinking budget must be 0 (off) or at least 1024 tokens (Anthropic's minimum)")
        return value


_SECTIONS = set(sections(Settings))  # the fields whose own fields are reported one by one
_MAX_PASSES = 64


def parse_settings(raw: Any) -> tuple[Settings, list[str]]:
    """Validate a raw ``pi`` section; return the settings and one message per rejected value.

    ``raw`` is the JSON value the client sent (``None`` gives the defaults without a message).
    Each rejected value is dropped so its default applies: a top-level field, or one field of a
    section (``edit``, ``changes`` ...; a list with a bad item is rejected whole); the settings
    remember why (:meth:`Settings.rejection`). Each unknown key is dropped with one message naming
    it (:func:`~pi_lsp.daemon.setting_paths.unknown_key_message`). Never raises.
    """
    if raw is None:
        return Settings(), []
    if not isinstance(raw, dict):
        return Settings(), [f"pi: settings must be an object, got {type(raw).__name__}; using defaults"]
    data = _copy(raw)
    problems: list[str] = []
    rejected: dict[str, str] = {}
    unknown: list[str] = []
    for _ in range(_MAX_PASSES):
        try:
            settings = Settings.model_validate(data)
            settings._rejected = rejected
            settings._unknown = unknown
            return settings, problems
        except ValidationError as exc:
            for error in exc.errors():
                path = _field_path(error["loc"])
                if error["type"] == "extra_forbidden":
                    if _drop(data, path):
                        unknown.append(unknown_key_message(Settings, path))
                        problems.append(unknown[-1])
                elif _drop(data, path):
                    name = "pi." + ".".join(path)
                    reason = error["msg"].removeprefix("Value error, ")  # pydantic's prefix to a ValueError
                    rejected[name] = f"{reason} (got {_short(error.get('input'))})"
                    problems.append(f"{name}: {rejected[name]}; using the default")
    return Settings(), problems + ["pi: settings could not be validated; using defaults"]


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(item) for key, item in value.items()}
    return value


def _field_path(loc: tuple[Any, ...]) -> tuple[str, ...]:
    head = str(loc[0]) if loc else ""
    if head in _SECTIONS and len(loc) > 1 and isinstance(loc[1], str):
        return head, loc[1]
    return (head,)


def _drop(data: dict[str, Any], path: tuple[str, ...]) -> bool:
    target: Any = data
    for key in path[:-1]:
        target = target.get(key) if isinstance(target, dict) else None
    if isinstance(target, dict) and path[-1] in target:
        del target[path[-1]]
        return True
    return False


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
