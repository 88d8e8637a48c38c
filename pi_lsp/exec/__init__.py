"""The headless face (design.md section 9): ``pi-lsp exec``, tool calls as JSON Lines on the filesystem.

Imports no pygls, lsprotocol or httpx, so it starts fast.
"""
