"""The MCP face (design.md section 9): ``pi-lsp mcp``, pi-lsp's tools for other agents.

Claude Code, Codex, Gemini CLI or Pi start ``pi-lsp mcp`` as an MCP server over stdio. It relays each
tool call to the pi-lsp daemon that the user's editor runs for the workspace (through the daemon's
private socket, :mod:`pi_lsp.ipc`), so edits land in the editor's buffers with undo and approvals
appear in the editor; with no editor daemon it runs the same tools on the filesystem. The only
importer of the ``mcp`` SDK.
"""
