"""The daemon's private per-user endpoint (design.md section 9, the MCP face).

A running daemon serves tool calls to other local agents through a Unix domain socket in a private
runtime directory (mode 0700), announced by a registry entry that names the socket, a random token
and the workspace folders. Nothing here listens on TCP: an open port that runs ``bash`` would be
remote code execution. Shared by the daemon (which serves) and ``pi-lsp mcp`` (which connects);
imports only the standard library.
"""
