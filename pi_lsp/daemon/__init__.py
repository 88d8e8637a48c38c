"""The LSP daemon face (design.md section 9): pygls server, ``pi/*`` methods, settings, sessions.

Started by an editor over stdio (``pi-lsp``); the switchboard is :mod:`pi_lsp.daemon.server`.
"""
