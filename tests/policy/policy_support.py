"""A real workspace on disk for the policy tests, and the policy's decision for a call in it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pi_lsp.policy.call_scope import call_scope
from pi_lsp.policy.protected_paths import ProtectedPaths
from pi_lsp.policy.rules import Decision, decide, parse_rules
from pi_lsp.policy.workspace_scope import WorkspaceScope
from pi_lsp.tools import TOOL_NAMES


class Workspace:
    """Folders ``ws`` (the cwd), ``ws2`` (a second root), ``tmp`` (the session temp folder) and
    ``outside``, with a few files; :meth:`decide` judges a call with the given rules."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.ws, self.ws2, self.tmp, self.outside = (base / n for n in ("ws", "ws2", "tmp", "outside"))
        for folder in (self.ws, self.ws2, self.tmp, self.outside):
            folder.mkdir()
        (self.ws / "src").mkdir()
        for name in ("a.txt", "src/b.py", ".env", ".env.example", "key.pem"):
            (self.ws / name).write_text("x\n", encoding="utf-8")
        (self.outside / "secret.txt").write_text("s\n", encoding="utf-8")
        self.scope = WorkspaceScope(lambda: [self.ws, self.ws2], self.tmp)

    def decide(self, tool: str, rules: list[dict[str, Any]] | None = None, protected: list[str] = (), **args: Any) -> Decision:  # type: ignore[assignment]
        """The decision for ``tool`` with ``args`` (fails the test on malformed rules)."""
        parsed, problems = parse_rules(rules or [], TOOL_NAMES)
        assert not problems, problems
        guards, guard_problems = ProtectedPaths.from_settings(list(protected))
        assert not guard_problems, guard_problems
        scope = call_scope(tool, SimpleNamespace(**args), self.ws)
        assert scope is not None
        return decide(scope, parsed, guards, self.scope, self.ws)

    def bash(self, command: str, **kwargs: Any) -> Decision:
        """The decision for ``bash`` running ``command``."""
        return self.decide("bash", command=command, **kwargs)
