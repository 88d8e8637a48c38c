"""The MCP tests drive a daemon with the e2e tests' scripted editor."""

from tests.e2e.conftest import make_editor  # noqa: F401  (a fixture, re-exported)
