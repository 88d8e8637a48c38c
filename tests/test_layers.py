"""The import rules of design.md section 1, checked by walking every module's imports."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pi_lsp"

# layer (path prefix relative to pi_lsp/) -> top-level packages it must never import
FORBIDDEN = {
    "agent/": {"pygls", "lsprotocol", "httpx", "pi_lsp.tools", "pi_lsp.editor", "pi_lsp.policy"},
    "llm/": {"pygls", "lsprotocol", "pi_lsp.agent", "pi_lsp.tools", "pi_lsp.editor"},
    "tools/": {"pygls", "lsprotocol", "httpx", "pi_lsp.editor", "pi_lsp.policy", "pi_lsp.server"},
    "policy/": {"pygls", "lsprotocol", "httpx", "pi_lsp.editor", "pi_lsp.server"},
    "editor/": {"httpx", "pi_lsp.policy", "pi_lsp.server"},
    "exec_cli.py": {"pygls", "lsprotocol", "httpx"},
}
PYGLS_ALLOWED = ("editor/", "server.py", "rpc.py", "server_cli.py", "demo/")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _violates(name: str, banned: str) -> bool:
    return name == banned or name.startswith(banned + ".")


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_module_respects_layers(path: Path) -> None:
    rel = path.relative_to(PACKAGE).as_posix()
    imported = _imports(path)
    for prefix, banned in FORBIDDEN.items():
        if rel.startswith(prefix) or rel == prefix:
            bad = sorted(n for n in imported for b in banned if _violates(n, b))
            assert not bad, f"{rel} imports {bad}, forbidden for {prefix} (design.md section 1)"
    if not rel.startswith(PYGLS_ALLOWED):
        bad = sorted(n for n in imported if _violates(n, "pygls") or _violates(n, "lsprotocol"))
        assert not bad, f"{rel} imports {bad}; only the editor bridge and the server may"
    if not rel.startswith("llm/"):
        bad = sorted(n for n in imported if _violates(n, "httpx"))
        assert not bad, f"{rel} imports httpx; only llm/ may"


def test_the_checker_catches_a_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import pygls.server\nfrom httpx import AsyncClient\n", encoding="utf-8")
    assert {"pygls.server", "httpx"} <= _imports(bad)


def test_exec_imports_no_protocol_or_http_library() -> None:
    code = (
        "import sys, pi_lsp.exec_cli, pi_lsp.tools\n"
        "from pi_lsp.tools import create_tools\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol', 'httpx')]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
