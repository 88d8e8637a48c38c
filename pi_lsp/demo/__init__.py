"""demo layer of pi-lsp (see design.md section 1)."""
