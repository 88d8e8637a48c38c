"""The ``pi.approvals`` rules and the decision for one call (issue 9, design.md section 8).

Rules are objects in ``pi.approvals.rules``::

    {"tool": "bash", "command": "^npm (test|run lint)$", "action": "allow"}
    {"tool": "edit", "path": "docs/**", "action": "allow"}
    {"tool": "*", "path": "/etc/**", "action": "deny"}
    {"tool": "bash", "action": "deny"}

- ``tool``: a tool name or ``"*"`` (required); ``action``: ``allow``, ``ask`` or ``deny``
  (required);
- ``command`` (bash only): a Python regular expression searched in the command (anchor it with
  ``^...$`` to match the whole command);
- ``path`` (file tools): a glob of :mod:`pi_lsp.policy.path_glob` matched against the resolved path;
- nothing else: an unknown key would silently widen a rule, so it makes the rule malformed.

Order of evaluation for a call: the rules **with** a pattern, in the order given (first match wins);
then the per-tool rules without a pattern, in order (``"*"`` covers every tool); then the defaults:

- ``read``, ``grep``, ``find``, ``ls``: allowed inside the workspace folders and the session temp
  folder, asked outside;
- ``edit``, ``write``: allowed inside the workspace, asked outside;
- ``bash``: allowed for a single simple read-only command (:mod:`pi_lsp.policy.readonly_commands`),
  asked otherwise;
- any other tool: asked.

Above all rules: ``edit``/``write`` of a protected path (:mod:`pi_lsp.policy.protected_paths`) is
denied, and ``read``/``grep`` of one is asked even when a rule allows it (a ``deny`` rule still
denies). Malformed rules (a bad key, action or type, a regex or glob that does not compile, a
tool that does not exist, ``command`` on a tool other than bash, ``path`` on bash) are reported
and **all** user rules are dropped for the defaults: a partly applied list could allow more than
the user meant, never "allow all".
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pi_lsp.policy.call_scope import CONTENT_TOOLS, PATH_TOOLS, WRITE_TOOLS, CallScope
from pi_lsp.policy.path_glob import GlobError, PathGlob
from pi_lsp.policy.protected_paths import ProtectedPaths, git_repository_part
from pi_lsp.policy.readonly_commands import CommandVerdict, judge_command
from pi_lsp.policy.workspace_scope import WorkspaceScope, real_path

Action = Literal["allow", "ask", "deny"]
ACTIONS: tuple[str, ...] = ("allow", "ask", "deny")
_KEYS = {"tool", "action", "command", "path"}


@dataclass(frozen=True)
class ApprovalRule:
    """One valid rule; ``index`` is its 0-based position in ``pi.approvals.rules``."""

    index: int
    tool: str
    action: Action
    command: re.Pattern[str] | None = None
    path: PathGlob | None = None

    @property
    def has_pattern(self) -> bool:
        """True for a pattern rule (``command`` or ``path``)."""
        return self.command is not None or self.path is not None

    def describe(self) -> str:
        """``pi.approvals.rules[2] (bash, command /^rm/, deny)`` for messages."""
        parts = [self.tool]
        if self.command is not None:
            parts.append(f"command /{self.command.pattern}/")
        if self.path is not None:
            parts.append(f"path {self.path.pattern}")
        return f"pi.approvals.rules[{self.index}] ({', '.join(parts)}, {self.action})"

    def matches(self, scope: CallScope, folders: list[Path]) -> bool:
        """True when the rule applies to ``scope``."""
        if self.tool != "*" and self.tool != scope.tool:
            return False
        if self.command is not None:
            return scope.command is not None and self.command.search(scope.command) is not None
        if self.path is not None:
            return scope.path is not None and self.path.matches(scope.path, folders)
        return True


def parse_rules(raw: Any, known_tools: Collection[str]) -> tuple[list[ApprovalRule], list[str]]:
    """Validate ``pi.approvals.rules``; return the rules and one message per problem.

    With any problem the returned rule list is empty (the defaults apply; module docstring).
    ``known_tools``: the registered tool names. Never raises.
    """
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        return [], [f"pi.approvals.rules: must be a list, got {type(raw).__name__}; using the default rules"]
    rules: list[ApprovalRule] = []
    problems: list[str] = []
    for index, item in enumerate(raw):
        try:
            rules.append(_parse_rule(index, item, known_tools))
        except ValueError as exc:
            problems.append(f"pi.approvals.rules[{index}]: {exc}")
    if problems:
        problems.append("pi.approvals.rules: not applied because of the problems above; using the default rules")
        return [], problems
    return rules, []


def _parse_rule(index: int, item: Any, known_tools: Collection[str]) -> ApprovalRule:
    if not isinstance(item, dict):
        raise ValueError(f"a rule must be an object, got {type(item).__name__}")
    unknown = sorted(str(key) for key in item if key not in _KEYS)
    if unknown:
        raise ValueError(f"unknown key {', '.join(repr(k) for k in unknown)} (allowed: tool, action, command, path)")
    tool = item.get("tool")
    if not isinstance(tool, str) or not tool:
        raise ValueError("'tool' must be a tool name or \"*\"")
    if tool != "*" and tool not in known_tools:
        raise ValueError(f"no tool is named {tool!r} (known: {', '.join(sorted(known_tools))})")
    action = item.get("action")
    if action not in ACTIONS:
        raise ValueError(f"'action' must be one of allow, ask, deny, got {action!r}")
    command = item.get("command")
    path = item.get("path")
    if command is not None and path is not None:
        raise ValueError("a rule has 'command' or 'path', not both")
    compiled: re.Pattern[str] | None = None
    glob: PathGlob | None = None
    if command is not None:
        if tool != "bash":
            raise ValueError("'command' applies to the bash tool only")
        if not isinstance(command, str):
            raise ValueError("'command' must be a regular expression string")
        try:
            compiled = re.compile(command)
        except re.error as exc:
            raise ValueError(f"'command' {command!r} is not a valid regular expression ({exc})") from None
    if path is not None:
        if tool != "*" and tool not in PATH_TOOLS:
            raise ValueError(f"'path' does not apply to the {tool} tool")
        if not isinstance(path, str):
            raise ValueError("'path' must be a glob string")
        try:
            glob = PathGlob.compile(path)
        except GlobError as exc:
            raise ValueError(f"'path' {path!r} is not a valid glob ({exc})") from None
    return ApprovalRule(index, tool, action, compiled, glob)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Decision:
    """What the policy decided before asking anyone.

    ``source``: ``"protected"``, ``"rule"`` or ``"default"``; ``reason``: one sentence for the user
    and the journal (why it is allowed, asked or denied); ``command``: for bash judged by the
    default rule, the judge's verdict (a ``default`` allow of bash is an auto-allowed command,
    run hardened: :mod:`pi_lsp.policy.sandbox`).
    """

    action: Action
    source: str
    reason: str
    command: CommandVerdict | None = None


INSIDE = Decision("allow", "default", "inside the workspace")
"""The decision of most calls (a decision is immutable: one object serves them all)."""


def decide(
    scope: CallScope,
    rules: Sequence[ApprovalRule],
    protected: ProtectedPaths,
    workspace: WorkspaceScope,
    cwd: Path,
    *,
    command_timeout_seconds: float = 5.0,
) -> Decision:
    """The decision for ``scope`` (module docstring for the order). Never raises.

    Judging a bash command runs bash to expand its words (at most ``command_timeout_seconds``):
    call it off the event loop for bash."""
    real = scope.real
    if real is None and scope.path is not None:
        real = real_path(scope.path)
    guarded = protected.match(scope.path, workspace, real) if scope.path is not None else None
    if scope.path is not None and scope.tool in WRITE_TOOLS and guarded is None:
        guarded = git_repository_part(str(scope.path))
    if guarded is not None and scope.tool in WRITE_TOOLS:
        return Decision("deny", "protected", f"{scope.shown} is a protected path ({guarded})")
    rule = _first_rule(scope, rules, workspace) if rules else None
    if guarded is not None and scope.tool in CONTENT_TOOLS and (rule is None or rule.action != "deny"):
        return Decision("ask", "protected", f"{scope.shown} is a protected path ({guarded}); its content would go to the model")
    if rule is not None:
        return Decision(rule.action, "rule", f"{rule.describe()} matches")
    return _default(scope, protected, workspace, cwd, real, command_timeout_seconds)


def _first_rule(scope: CallScope, rules: Sequence[ApprovalRule], workspace: WorkspaceScope) -> ApprovalRule | None:
    folders = workspace.folders() + workspace.roots()
    for rule in [r for r in rules if r.has_pattern] + [r for r in rules if not r.has_pattern]:
        if rule.matches(scope, folders):
            return rule
    return None


def _default(
    scope: CallScope,
    protected: ProtectedPaths,
    workspace: WorkspaceScope,
    cwd: Path,
    real: str | None,
    command_timeout_seconds: float,
) -> Decision:
    if scope.kind == "command":

        def check(path: str, kind: str) -> str | None:
            resolved = real_path(path)
            if not workspace.contains(Path(path), resolved):
                return f"{path} is outside the workspace" if resolved == path else (
                    f"{path} is outside the workspace (it opens {resolved})"
                )
            guarded = protected.match(Path(path), workspace, resolved) if kind != "name" else None
            if guarded is not None:
                return f"{path} is a protected path ({guarded})"
            return None

        def guard(path: str) -> str | None:
            return protected.match(Path(path), workspace, path)

        verdict = judge_command(
            scope.command or "", cwd, check, guard, timeout_seconds=command_timeout_seconds,
            may_protect=protected.may_protect_name,
            inside=lambda path: workspace.contains(Path(path), path),
        )
        if verdict.problem is None:
            return Decision("allow", "default", "a simple read-only command", verdict)
        return Decision("ask", "default", f"not a simple read-only command: {verdict.problem}", verdict)
    if scope.kind == "path" and scope.path is not None:
        if workspace.contains(scope.path, real):
            return INSIDE
        return Decision("ask", "default", f"{scope.shown} is outside the workspace")
    return Decision("ask", "default", f"no rule covers the {scope.tool} tool")
