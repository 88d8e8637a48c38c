"""`python -m pi_lsp` starts the same command line as the `pi-lsp` script."""

from pi_lsp.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
