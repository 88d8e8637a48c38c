"""The daemon's LSP and ``pi/*`` handlers, one module per concern, registered by ``create_server``."""
