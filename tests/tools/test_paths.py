"""Path resolution (pi-behaviour.md 1.2, 1.3 and the checklist's path items)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from pi_lsp.tools.file_io.paths import (
    InvalidPathError,
    display_path,
    expand_path,
    resolve_read_path,
    resolve_to_cwd,
)

CWD = Path("/work/project")


def test_tilde_rules() -> None:
    home = str(Path.home())
    assert expand_path("~") == home
    assert expand_path("~/Documents/file.txt") == home + "/Documents/file.txt"
    assert expand_path("~draft.md") == "~draft.md"
    assert expand_path("@~draft.md") == "~draft.md"
    assert resolve_to_cwd("~user/x", CWD) == CWD / "~user/x"


def test_one_leading_at_is_stripped() -> None:
    assert resolve_to_cwd("@src/a.py", CWD) == CWD / "src/a.py"
    assert resolve_to_cwd("@@a", CWD) == CWD / "@a"
    assert resolve_to_cwd("a@b", CWD) == CWD / "a@b"


def test_unicode_spaces_become_plain_spaces() -> None:
    for space in ["\u00a0", "\u2000", "\u2005", "\u200a", "\u202f", "\u205f", "\u3000"]:
        assert resolve_to_cwd(f"my{space}file.txt", CWD) == CWD / "my file.txt"
    # whitespace is not trimmed
    assert resolve_to_cwd(" a ", CWD) == CWD / " a "


def test_absolute_relative_and_normalisation() -> None:
    assert resolve_to_cwd("/etc/hosts", CWD) == Path("/etc/hosts")
    assert resolve_to_cwd("/a/./b/../c/", CWD) == Path("/a/c")
    assert resolve_to_cwd("//a//b", CWD) == Path("/a/b")
    assert resolve_to_cwd("src/../lib/x.py", CWD) == CWD / "lib/x.py"
    assert resolve_to_cwd("../outside.txt", CWD) == Path("/work/outside.txt")
    assert resolve_to_cwd("", CWD) == CWD
    assert resolve_to_cwd("~draft.md", CWD) == CWD / "~draft.md"
    assert resolve_to_cwd("@~draft.md", CWD) == CWD / "~draft.md"


def test_file_urls() -> None:
    assert resolve_to_cwd("file:///tmp/my%20file.txt", CWD) == Path("/tmp/my file.txt")
    assert resolve_to_cwd("file://localhost/tmp/x", CWD) == Path("/tmp/x")
    assert resolve_to_cwd("FILE:///tmp/x", CWD) == Path("/tmp/x")
    with pytest.raises(InvalidPathError, match="^File URL host must be \"localhost\" or empty on linux$"):
        resolve_to_cwd("file://server/share/x", CWD)
    with pytest.raises(InvalidPathError, match="encoded /"):
        resolve_to_cwd("file:///tmp/a%2Fb", CWD)


def test_plain_names_with_percent_signs_are_preserved() -> None:
    assert resolve_to_cwd("a%2Fb.txt", CWD) == CWD / "a%2Fb.txt"
    assert resolve_to_cwd("/tmp/100%A", CWD) == Path("/tmp/100%A")


def test_display_path() -> None:
    assert display_path(CWD / "src" / "a.py", CWD) == "src/a.py"
    assert display_path(CWD, CWD) == "."
    assert display_path(Path("/etc/hosts"), CWD) == "/etc/hosts"
    assert display_path(Path("/work/projectX/a"), CWD) == "/work/projectX/a"


def test_read_fallback_nfd(tmp_path: Path) -> None:
    nfc = unicodedata.normalize("NFC", "café.txt")
    nfd = unicodedata.normalize("NFD", nfc)
    (tmp_path / nfd).write_text("x")
    assert resolve_read_path(nfc, tmp_path) == tmp_path / nfd


def test_read_fallback_curly_apostrophe(tmp_path: Path) -> None:
    (tmp_path / "Capture d\u2019ecran.png").write_text("x")
    assert resolve_read_path("Capture d'ecran.png", tmp_path) == tmp_path / "Capture d\u2019ecran.png"


def test_read_fallback_nfd_plus_curly(tmp_path: Path) -> None:
    name = unicodedata.normalize("NFD", "Capture d\u2019écran.png")
    (tmp_path / name).write_text("x")
    assert resolve_read_path("Capture d'écran.png", tmp_path) == tmp_path / name


@pytest.mark.parametrize("typed", ["Shot 10.00.00 AM.png", "Shot 10.00.00 am.png"])
def test_read_fallback_macos_screenshot(tmp_path: Path, typed: str) -> None:
    stored = typed.replace(" AM.", "\u202fAM.").replace(" am.", "\u202fam.")
    (tmp_path / stored).write_text("x")
    assert resolve_read_path(typed, tmp_path) == tmp_path / stored


def test_read_fallback_prefers_the_existing_plain_path(tmp_path: Path) -> None:
    (tmp_path / "it's.txt").write_text("plain")
    (tmp_path / "it\u2019s.txt").write_text("curly")
    assert resolve_read_path("it's.txt", tmp_path) == tmp_path / "it's.txt"


def test_read_fallback_missing_returns_plain_path(tmp_path: Path) -> None:
    assert resolve_read_path("nope's.txt", tmp_path) == tmp_path / "nope's.txt"

