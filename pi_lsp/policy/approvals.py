"""The approval hook: allow, ask or deny every tool call before it runs (issue 9, design.md 8).

:class:`ApprovalPolicy` is a ``before_tool_call`` hook (register it with
``pipeline.add_before_hook(policy, first=True)``) that applies alike to the daemon's own agent
loop and to external ``pi/executeToolCall``\\ s. For each call it takes the
:class:`~pi_lsp.policy.call_scope.CallScope`, the :func:`~pi_lsp.policy.rules.decide` verdict, and:

- ``allow``: the call runs;
- ``deny``: the call is blocked with an error result saying why;
- ``ask``: a session grant for exactly this scope lets it run; otherwise the injected ``ask``
  callable asks the user (the daemon: ``window/showMessageRequest`` with the actions
  :data:`ALLOW_ONCE`, :data:`ALLOW_SESSION`, :data:`DENY`). ``Allow for this session`` records a
  grant for exactly the scope the prompt showed (same tool, same command text or same absolute
  path), kept per session id until :meth:`ApprovalPolicy.end_session`. ``Deny`` or a dismissed
  prompt blocks the call: the model is told the user declined. No answer within
  ``pi.approvals.timeoutSeconds``, or an editor that cannot ask (:class:`ApprovalUnavailable`),
  or no ``ask`` at all (``pi-lsp exec``): the configured fallback (default ``deny``), and the
  result says why.

An abort while the prompt is open cancels the wait: the call gets ``Operation aborted`` from the
pipeline, the decision is journaled as cancelled, and an answer arriving later changes nothing
(no grant is recorded). Every decision is passed to the injected ``journal(entry)`` callable.

Every question asked is also announced through the injected ``announce(request, event)`` callable
(APPROVALS_SPEC, issue 15): ``approval_requested`` before asking and ``approval_resolved`` after,
with ``by`` = ``user``, ``timeout``, ``aborted`` (the run or the call was aborted), ``cancelled``
(the client cancelled the request, ``$/cancelRequest``) or ``fallback`` (the editor cannot ask).
The daemon forwards them as ``pi/event`` and withdraws the editor's prompt on ``timeout``,
``aborted`` and ``cancelled``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import uuid
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

from pi_lsp.agent.hooks import BeforeToolCallContext, BeforeToolCallResult
from pi_lsp.agent.tool import AbortSignal, ToolContext
from pi_lsp.llm.types import now_ms
from pi_lsp.policy.call_scope import LANGUAGE_READ_TOOLS, READ_TOOLS, CallScope, _shown, call_scope
from pi_lsp.policy.protected_paths import ProtectedPaths
from pi_lsp.policy.rules import INSIDE, ApprovalRule, Decision, decide, parse_rules
from pi_lsp.policy.sandbox import Sandbox, SandboxMode
from pi_lsp.tools.bash import BashArgs
from pi_lsp.tools.read import ReadArgs
from pi_lsp.policy.workspace_scope import WorkspaceScope
from pi_lsp.tools.environment import ToolEnvironment

logger = logging.getLogger(__name__)

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
DENY = "Deny"
ANSWERS: tuple[str, ...] = (ALLOW_ONCE, ALLOW_SESSION, DENY)
"""The prompt's actions, in the order shown."""

ACTION_IDS: dict[str, str] = {"allowOnce": ALLOW_ONCE, "allowSession": ALLOW_SESSION, "deny": DENY}
"""The wire ids of ``pi/requestApproval``'s actions and the answers they stand for."""

Fallback = Literal["allow", "deny"]

WithdrawReason = Literal["timeout", "aborted", "cancelled"]
"""Why a pending question was withdrawn before the user answered."""

READ_ONLY_TOOLS: frozenset[str] = frozenset({"read", "grep", "find", "ls", *LANGUAGE_READ_TOOLS})
"""Tools that create no files (the sandbox's mask scan stays valid after them)."""


@dataclass(frozen=True)
class ApprovalRequest:
    """One question to the user.

    Attributes:
        session_id: the agent session (``"external"`` for ``pi/executeToolCall``).
        tool_call_id: the call's id.
        scope: what the call touches (:class:`CallScope`); ``scope.shown`` is the exact command,
            path or tool name a grant would cover.
        reason: why it asks (``a.txt is outside the workspace``).
        approval_id: unique id of this question (``pi/requestApproval``'s ``approvalId``).
        read_only: the call only reads (``read``, ``grep``, ``find``, ``ls`` of a path that is
            not protected): the only scope whose prompt may preselect ``Allow once``.
        timeout_seconds: how long the policy waits for the answer.
    """

    session_id: str
    tool_call_id: str
    scope: CallScope
    reason: str
    approval_id: str = ""
    read_only: bool = False
    timeout_seconds: float = 120.0

    @property
    def title(self) -> str:
        """One line for a prompt's title or a status item: ``Run bash: rm -rf build``,
        ``Use read: ../notes.txt``, ``Use the deploy tool``."""
        first = self.scope.shown.splitlines()[0] if self.scope.shown else ""
        if len(first) > 120:
            first = first[:119] + "…"
        elif first != self.scope.shown:
            first += " …"
        if self.scope.kind == "command":
            return f"Run {self.scope.tool}: {first}"
        if self.scope.kind == "path":
            return f"Use {self.scope.tool}: {first}"
        return f"Use the {self.scope.tool} tool"

    @property
    def message(self) -> str:
        """The prompt text: tool, exact scope and why it asks."""
        what = {"command": "run the command", "path": "use the path"}.get(self.scope.kind, "use the tool")
        subject = f"`{self.scope.shown}`" if self.scope.kind != "tool" else self.scope.tool
        return f"pi: allow {self.scope.tool} to {what} {subject}?\nWhy this asks: {self.reason}."


class ApprovalUnavailable(Exception):
    """Raised by an ``ask`` callable when the editor cannot ask (no such request, an error reply,
    the connection gone); ``str()`` says why. The configured fallback applies."""


Ask = Callable[[ApprovalRequest], Awaitable[str | None]]
"""``await ask(request)`` -> one of :data:`ANSWERS`, or ``None`` when the user dismissed the prompt;
may raise :class:`ApprovalUnavailable`. The policy applies the timeout and may cancel it."""

Announce = Callable[[ApprovalRequest, dict[str, Any]], None]
"""Receives each asked question's ``approval_requested`` and ``approval_resolved`` events (the
``pi/event`` shapes of APPROVALS_SPEC); must not raise."""

Journal = Callable[[dict[str, Any]], None]
"""Receives one entry per decision; must not raise. Keys (camelCase JSON):
``type`` (``"approval"``), ``sessionId``, ``toolCallId``, ``toolName``, ``scope`` (the command,
path or tool shown), ``scopeKind`` (``command``/``path``/``tool``), ``policy`` and ``policyReason``
(the rules' verdict before asking: ``allow``/``ask``/``deny`` and why), ``decision``
(``allow``/``deny``: what happened), ``by`` (``default``, ``rule``, ``protected``, ``grant``,
``user``, ``fallback`` or ``cancelled``), ``reason``, ``answer`` (the action chosen, when asked),
``grant`` (``"session"`` when a session grant was recorded), ``timestamp`` (epoch ms).

A journal object may also have a ``wants_routine(session_id)`` method: when it returns False,
the routine decisions of that session's calls (the rules allowed the call without asking) are
not built nor passed to it (:class:`LogJournal`: they would be dropped below DEBUG anyway;
issue 21)."""


@dataclass(frozen=True)
class _Outcome:
    allow: bool
    source: str
    reason: str
    answer: str | None = None
    by: str | None = None  # how an asked question ended: user, timeout, fallback


_ALLOWED_INSIDE = _Outcome(True, INSIDE.source, INSIDE.reason)
"""The outcome of :data:`~pi_lsp.policy.rules.INSIDE`, the decision of most calls."""


class _Withdrawn(Exception):
    """The wait for an answer was cancelled (abort, ``$/cancelRequest``)."""


class ApprovalPolicy:
    """The approval hook of one daemon or ``pi-lsp exec`` session (see the module docstring).

    ``env`` gives the working directory, the workspace folders and the temp folder (read at each
    call, so folder changes apply); ``known_tools`` are the registered tool names (for rule
    checks); ``ask`` is ``None`` where nobody can be asked; ``unavailable_reason`` is what the
    result says then. Configure rules with :meth:`configure`.
    """

    def __init__(
        self,
        env: ToolEnvironment,
        known_tools: Collection[str],
        *,
        ask: Ask | None = None,
        journal: Journal | None = None,
        announce: Announce | None = None,
        unavailable_reason: str = "there is no editor to ask",
    ) -> None:
        self.env = env
        self.known_tools = set(known_tools)
        self.ask = ask
        self.journal = journal
        self._wants_routine: Callable[[str], bool] | None = getattr(journal, "wants_routine", None)
        self.announce = announce
        self.unavailable_reason = unavailable_reason
        self.workspace = WorkspaceScope(lambda: self.env.workspace_folders or [self.env.cwd], env.temp_dir)
        self.rules: list[ApprovalRule] = []
        self.protected = ProtectedPaths()
        self.timeout_seconds = 120.0
        self.fallback: Fallback = "deny"
        self.grants: dict[str, set[tuple[str, str, str]]] = {}
        self.sandbox = Sandbox("auto")
        env.content_guard = self._content_guard
        env.approve_writes = self._approve_writes
        self.command_timeout_seconds = 5.0

    def configure(
        self,
        rules: Any = None,
        *,
        protected_paths: Sequence[object] = (),
        timeout_seconds: float = 120.0,
        fallback: Fallback = "deny",
        sandbox: SandboxMode = "auto",
        command_timeout_seconds: float = 5.0,
    ) -> list[str]:
        """Apply ``pi.approvals``, ``pi.protectedPaths`` and ``pi.bash.sandbox``; return the
        problems to report. ``command_timeout_seconds`` bounds the judging of one bash command
        (bash expanding its words).

        Malformed rules leave the default rules in force (:func:`parse_rules`); bad protected-path
        globs are left out while the built-in list stays. Never raises.
        """
        self.rules, problems = parse_rules(rules, self.known_tools)
        self.protected, path_problems = ProtectedPaths.from_settings(protected_paths)
        self.timeout_seconds = timeout_seconds
        self.fallback = fallback
        self.sandbox.mode = sandbox
        self.command_timeout_seconds = command_timeout_seconds
        return problems + path_problems

    def end_session(self, session_id: str) -> None:
        """Forget the session's grants (a new session asks again)."""
        self.grants.pop(session_id, None)

    async def __call__(self, ctx: BeforeToolCallContext, signal: AbortSignal) -> BeforeToolCallResult | None:
        """The hook: ``None`` to let the call run, a block with the reason otherwise.

        A ``read`` the rules allow without asking gets the path it was judged by handed to the
        tool (:meth:`~pi_lsp.tools.read.ReadArgs.hand_over_resolved_path`): the tool reads
        exactly the file judged, without resolving it again (issue 21)."""
        cwd = self.env.cwd
        scope = call_scope(ctx.tool.name, ctx.args, cwd)
        if scope is None:
            return None  # an invalid file URL: the tool fails on its own and touches nothing
        if scope.kind == "command":  # judging runs bash to expand the words: off the event loop
            decision = await asyncio.to_thread(
                decide, scope, self.rules, self.protected, self.workspace, cwd,
                command_timeout_seconds=self.command_timeout_seconds,
            )
            decision = self._harden(ctx, decision)
        else:
            decision = decide(scope, self.rules, self.protected, self.workspace, cwd)
        if decision.action == "ask":
            try:
                outcome = await self._outcome(ctx, scope, decision, signal)
            except asyncio.CancelledError:
                self._journal(ctx, scope, decision, _Outcome(False, "cancelled", "the call was aborted while asking"))
                raise
        elif decision is INSIDE:  # settled by the rules: what _outcome gives, without a coroutine
            outcome = _ALLOWED_INSIDE
        else:
            outcome = _Outcome(decision.action == "allow", decision.source, decision.reason)
        self._journal(ctx, scope, decision, outcome)
        if not outcome.allow:
            return BeforeToolCallResult(block=True, reason=_denial(scope, outcome))
        if scope.tool in READ_ONLY_TOOLS:
            args = ctx.args
            if scope.real is not None and decision.action == "allow" and type(args) is ReadArgs:
                args.hand_over_resolved_path(cwd, scope.path, scope.real)  # type: ignore[arg-type]
        elif not (decision.command is not None and decision.action == "allow"):
            self.sandbox.invalidate()  # it may create files: rescan what to mask next time
        return None

    async def _approve_writes(self, tool: str, paths: list[Path], ctx: ToolContext) -> str | None:
        """Judge each file a call changes beyond the path its arguments name (``rename``'s other
        files, issue 17) as an edit of that file: protected refused, outside the workspace asked
        (one question per file), rules applied. Returns the first refusal's model-facing text, or
        ``None`` when every file is allowed."""
        call = SimpleNamespace(session_id=ctx.session_id, tool_call=SimpleNamespace(id=ctx.tool_call_id))
        for path in paths:
            scope = CallScope(tool, "path", path=path, shown=_shown(os.fspath(path), os.path.normpath(self.env.cwd)))
            decision = decide(scope, self.rules, self.protected, self.workspace, self.env.cwd)
            outcome = await self._outcome(call, scope, decision, ctx.signal)  # type: ignore[arg-type]
            self._journal(call, scope, decision, outcome)  # type: ignore[arg-type]
            if not outcome.allow:
                return _denial(scope, outcome)
        return None

    def _content_guard(self, path: str) -> str | None:
        """The protected pattern of ``path`` (absolute), for search tools to withhold its lines."""
        return self.protected.match(Path(path), self.workspace)

    def _harden(self, ctx: BeforeToolCallContext, decision: Decision) -> Decision:
        """An auto-allowed command (the default rule allowed it) runs in the sandbox with git
        hardened (:mod:`pi_lsp.policy.sandbox`); with ``pi.bash.sandbox`` ``required`` and no
        working sandbox it is asked about instead."""
        if decision.action != "allow" or decision.source != "default" or decision.command is None:
            return decision
        launch = self.sandbox.launch(
            git=decision.command.git,
            argv=decision.command.argv,
            program=decision.command.program,
            stderr_to_null=decision.command.stderr_to_null,
            roots=self.workspace.roots(),
            cwd=self.env.cwd,
            protected=lambda path: self.protected.match(Path(path), self.workspace, path),
            may_protect=self.protected.may_protect_name,
        )
        if launch is None:
            why = self.sandbox.status.reason
            return Decision("ask", "default", f"no sandbox is available ({why}) and pi.bash.sandbox is required")
        if isinstance(ctx.args, BashArgs):
            ctx.args.set_launch(launch)
        return decision

    async def _outcome(
        self, ctx: BeforeToolCallContext, scope: CallScope, decision: Decision, signal: AbortSignal
    ) -> _Outcome:
        if decision.action == "allow":
            return _Outcome(True, decision.source, decision.reason)
        if decision.action == "deny":
            return _Outcome(False, decision.source, decision.reason)
        if scope.grant_key in self.grants.get(ctx.session_id, set()):
            return _Outcome(True, "grant", "allowed for this session earlier")
        if self.ask is None:
            return self._fallback(self.unavailable_reason)
        request = ApprovalRequest(
            ctx.session_id, ctx.tool_call.id, scope, decision.reason, approval_id=uuid.uuid4().hex,
            read_only=scope.tool in READ_TOOLS and decision.source != "protected",
            timeout_seconds=self.timeout_seconds,
        )
        self._announce(request, {
            "type": "approval_requested", "approvalId": request.approval_id, "toolCallId": request.tool_call_id,
            "toolName": scope.tool, "title": request.title, "scope": scope.shown, "reason": request.reason,
        })
        try:
            outcome = await self._ask(request)
        except asyncio.CancelledError:
            by = "cancelled" if signal.reason == "cancelled by the client" else "aborted"
            self._resolved(request, _Outcome(False, by, "the call was aborted while asking", by=by))
            raise
        self._resolved(request, outcome)
        return outcome

    async def _ask(self, request: ApprovalRequest) -> _Outcome:
        assert self.ask is not None
        try:
            answer = await asyncio.wait_for(self.ask(request), self.timeout_seconds)
        except asyncio.TimeoutError:
            return self._fallback(f"no answer within {self.timeout_seconds:g} s", by="timeout")
        except ApprovalUnavailable as exc:
            return self._fallback(f"the editor cannot ask ({exc})", by="fallback")
        session_id, scope = request.session_id, request.scope
        if answer == ALLOW_SESSION:
            self.grants.setdefault(session_id, set()).add(scope.grant_key)
            return _Outcome(True, "user", "allowed for this session", answer, by="user")
        if answer == ALLOW_ONCE:
            return _Outcome(True, "user", "allowed once", answer, by="user")
        if answer == DENY:
            return _Outcome(False, "user", "the user declined", answer, by="user")
        return _Outcome(False, "user", "the user dismissed the prompt", answer, by="user")

    def _fallback(self, why: str, by: str | None = None) -> _Outcome:
        return _Outcome(self.fallback == "allow", "fallback", f"{why}; the fallback is {self.fallback}", by=by)

    def _resolved(self, request: ApprovalRequest, outcome: _Outcome) -> None:
        scope = None
        if outcome.allow:
            scope = "session" if outcome.answer == ALLOW_SESSION else "once"
        self._announce(request, {
            "type": "approval_resolved", "approvalId": request.approval_id, "toolCallId": request.tool_call_id,
            "toolName": request.scope.tool, "decision": "allow" if outcome.allow else "deny", "scope": scope,
            "by": outcome.by or outcome.source, "reason": outcome.reason,
        })

    def _announce(self, request: ApprovalRequest, event: dict[str, Any]) -> None:
        if self.announce is None:
            return
        try:
            self.announce(request, event)
        except Exception:  # telling the editor never fails a call
            logger.exception("could not announce an approval event")

    def _journal(self, ctx: BeforeToolCallContext, scope: CallScope, decision: Decision, outcome: _Outcome) -> None:
        if self.journal is None:
            return
        wants_routine = self._wants_routine
        if wants_routine is not None and outcome.allow and decision.action == "allow" and not wants_routine(ctx.session_id):
            return
        entry: dict[str, Any] = {
            "type": "approval",
            "sessionId": ctx.session_id,
            "toolCallId": ctx.tool_call.id,
            "toolName": scope.tool,
            "scope": scope.shown,
            "scopeKind": scope.kind,
            "policy": decision.action,
            "policyReason": decision.reason,
            "decision": "allow" if outcome.allow else "deny",
            "by": outcome.source,
            "reason": outcome.reason,
            "timestamp": now_ms(),
        }
        if outcome.answer is not None:
            entry["answer"] = outcome.answer
        if outcome.answer == ALLOW_SESSION:
            entry["grant"] = "session"
        try:
            self.journal(entry)
        except Exception:  # journaling never fails a call
            logger.exception("could not journal an approval decision")


def _denial(scope: CallScope, outcome: _Outcome) -> str:
    """The model-facing error text of a blocked call."""
    target = f"{scope.tool} `{scope.shown}`" if scope.kind != "tool" else f"the {scope.tool} tool"
    if outcome.source == "user":
        return (
            f"The user declined this tool call ({target}): {outcome.reason}. "
            "Do not retry it; continue another way or ask the user."
        )
    if outcome.source == "fallback":
        return (
            f"This tool call ({target}) needs the user's approval and was not run: {outcome.reason}."
        )
    if outcome.source == "protected":
        return f"This tool call ({target}) was refused: {outcome.reason}; edit, write and rename never change protected paths."
    return f"This tool call ({target}) was refused by the approval rules: {outcome.reason}."


class LogJournal:
    """A :data:`Journal` that writes each entry to ``log`` (:func:`log_decision`), for the faces
    without a session journal (``pi-lsp exec``, ``pi-lsp mcp``). Routine allows go at DEBUG, so
    :meth:`wants_routine` tells the policy to skip building them while DEBUG is off."""

    __slots__ = ("log",)

    def __init__(self, log: logging.Logger) -> None:
        self.log = log

    def __call__(self, entry: dict[str, Any]) -> None:
        log_decision(self.log, entry)

    def wants_routine(self, session_id: str) -> bool:
        """True when routine allows would be logged (DEBUG is enabled for :attr:`log`), whatever
        the session."""
        return self.log.isEnabledFor(logging.DEBUG)


def log_decision(log: logging.Logger, entry: dict[str, Any]) -> None:
    """Write one journal ``entry`` of :class:`ApprovalPolicy` to ``log`` as ``approval: {json}``.

    INFO when the decision involved the user, a session grant, the fallback or a refusal; DEBUG
    when the rules simply allowed the call, so routine reads do not cost a log write each (about
    a fifth of a small read's time in the daemon). Nothing is serialised when the level is off.
    """
    routine = entry.get("policy") == "allow" and entry.get("decision") == "allow"
    level = logging.DEBUG if routine else logging.INFO
    if log.isEnabledFor(level):
        log.log(level, "approval: %s", json.dumps(entry, ensure_ascii=False))
