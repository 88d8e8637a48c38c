"""The policy layer (design.md sections 1 and 8, issue 9): approvals, protected paths, workspace
confinement. It imports ``agent`` and ``tools`` only, never pygls or the editor.

- :mod:`~pi_lsp.policy.approvals`: :class:`ApprovalPolicy`, the ``before_tool_call`` hook the
  daemon and ``pi-lsp exec`` register first; it asks through an injected ``ask`` callable;
- :mod:`~pi_lsp.policy.rules`: the ``pi.approvals`` rules, the defaults and :func:`decide`;
- :mod:`~pi_lsp.policy.protected_paths`, :mod:`~pi_lsp.policy.workspace_scope`,
  :mod:`~pi_lsp.policy.call_scope`, :mod:`~pi_lsp.policy.path_glob`: what a call touches and
  whether that is protected or outside the workspace;
- :mod:`~pi_lsp.policy.readonly_commands` and :mod:`~pi_lsp.policy.shell_words`: the simple
  read-only bash commands that run without asking.
"""
