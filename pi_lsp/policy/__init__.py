"""The policy layer (design.md sections 1 and 8, issue 9): approvals, protected paths, workspace
confinement. It imports ``agent`` and ``tools`` only, never pygls or the editor.

- :mod:`~pi_lsp.policy.approvals`: :class:`ApprovalPolicy`, the ``before_tool_call`` hook the
  daemon and ``pi-lsp exec`` register first; it asks through an injected ``ask`` callable;
- :mod:`~pi_lsp.policy.rules`: the ``pi.approvals`` rules, the defaults and :func:`decide`;
- :mod:`~pi_lsp.policy.protected_paths`, :mod:`~pi_lsp.policy.workspace_scope`,
  :mod:`~pi_lsp.policy.call_scope`, :mod:`~pi_lsp.policy.path_glob`: what a call touches and
  whether that is protected or outside the workspace;
- :mod:`~pi_lsp.policy.readonly_commands`: the judge of the bash commands that run without
  asking (issue 13), with :mod:`~pi_lsp.policy.shell_grammar` (tree-sitter-bash),
  :mod:`~pi_lsp.policy.shell_expand` (bash's own expansion), :mod:`~pi_lsp.policy.command_args`
  and :mod:`~pi_lsp.policy.command_table` (per-command option allowlists);
- :mod:`~pi_lsp.policy.sandbox`: bubblewrap and hardened git for what runs without asking.
"""
