"""``pi-lsp --help``: the usage names every way to run pi-lsp (a real subprocess)."""

from __future__ import annotations

import subprocess

import pytest

from tests.e2e.daemon_support import SERVER_COMMAND, server_env


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_lists_the_daemon_options_and_the_subcommands(flag: str) -> None:
    done = subprocess.run(
        [*SERVER_COMMAND, flag], capture_output=True, text=True, timeout=60, env=server_env(), stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for needle in ("pi-lsp [--stdio] [--log-file F] [-v]", "pi-lsp exec", "pi-lsp demo", "pi-lsp replay",
                   "--version"):
        assert needle in out, needle


def test_version_flag_prints_the_version() -> None:
    from pi_lsp import __version__

    done = subprocess.run([*SERVER_COMMAND, "--version"], capture_output=True, text=True, timeout=60,
                          env=server_env(), stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and done.stdout.strip() == f"pi-lsp {__version__}"
