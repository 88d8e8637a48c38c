"""Issue 17 in real headless Neovim (0.7.2 and 0.11.x) with a real language server (pylsp, started
by the scenario's own FileType autocommand as a user's config would): the plugin answers
``pi/languageRequest`` and ``pi/diagnostics`` by asking pylsp, loading closed files hidden, converting
positions between pi-lsp's encoding and pylsp's, and sends ``pi/diagnosticsChanged``."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.editors.editor_support import assert_passed
from tests.editors.test_nvim import nvim, run_scenario  # noqa: F401  (nvim is a fixture, re-used)

LIB = "def helper(x):\n    return x + 1\n"
MAIN = 'from lib import helper\n\nprint(helper(2))\ns = "éü"; y = helper(4)\n'
UTIL = "from lib import helper\n\nVALUE = helper(3)\n"


def pylsp() -> str:
    """The ``pylsp`` of this environment (the test extra installs python-lsp-server[pyflakes])."""
    path = shutil.which("pylsp", path=str(Path(sys.executable).parent))
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("pylsp is missing (pip install -e '.[test]'); CI=true: a missing part fails")
        pytest.skip("pylsp is not installed (pip install -e '.[test]'); these tests are skipped on this machine")
    return path


PROJECT = {"lib.py": LIB, "main.py": MAIN, "util.py": UTIL, "notes.txt": "plain notes\n", "readme.md": "# Notes\n"}
"""lib.py defines ``helper``; main.py and util.py use it (main.py also after non-ASCII text)."""


def test_handlers_ask_the_users_language_server(nvim: str, tmp_path: Path) -> None:  # noqa: F811
    (rc, data, output), ws = run_scenario(
        nvim, tmp_path, "knowledge_handlers.lua", files=PROJECT, PI_TEST_PYLSP=pylsp())
    assert_passed(rc, data, output)
    assert (ws / "lib.py").read_text(encoding="utf-8") == LIB  # the rename was only answered, not applied


def test_language_tools_through_the_daemon(nvim: str, tmp_path: Path) -> None:  # noqa: F811
    (rc, data, output), ws = run_scenario(
        nvim, tmp_path, "knowledge_tools.lua", files=PROJECT, PI_TEST_PYLSP=pylsp())
    assert_passed(rc, data, output)
    print(nvim, data["notes"].get("timing"))  # a figure for the report (pytest -s), not an assertion
    assert (ws / "util.py").read_text(encoding="utf-8") == "from lib import assist\n\nVALUE = assist(3)\n"


def test_a_reviewed_rename_shows_one_float_per_file(nvim: str, tmp_path: Path) -> None:  # noqa: F811
    (rc, data, output), ws = run_scenario(
        nvim, tmp_path, "rename_review.lua", files={"lib.py": LIB, "main.py": "from lib import helper\n\nprint(helper(2))\n"},
        PI_TEST_PYLSP=pylsp())
    assert_passed(rc, data, output)
    renamed = [name for name in ("lib.py", "main.py") if "assist" in (ws / name).read_text(encoding="utf-8")]
    assert len(renamed) == 1  # the file accepted in the first float; the other was rejected
