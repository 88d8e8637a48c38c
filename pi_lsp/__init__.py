"""pi-lsp: the editor-side tool host for an AI coding agent (Pi's tools over LSP)."""

__version__ = "0.1.0"
