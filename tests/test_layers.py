"""The import rules of design.md sections 1 and 9, checked on every import form of every module.

Each layer (a folder of ``pi_lsp/``, or a loose module) has an allowlist: the ``pi_lsp`` layers it may
import and the third-party distributions it may import. Anything else is a violation. Imports are
read from the syntax tree: ``import a.b``, ``from a import b``, relative imports (resolved against the
module's package), imports inside functions, ``if TYPE_CHECKING`` blocks and ``try`` blocks all count,
and so does a literal module name passed to ``importlib.import_module`` or ``__import__``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pi_lsp"

INTERNAL: dict[str, set[str]] = {
    # the core (design.md section 1): each layer looks only down
    "llm": {"llm"},
    "agent": {"agent", "llm"},
    "tools": {"tools", "agent", "llm"},
    "policy": {"policy", "tools", "agent", "llm"},
    "editor": {"editor", "tools", "agent", "llm"},
    # the faces (design.md section 9): each looks down on the core, never at another face
    "changes": {"changes", "tools", "agent", "llm"},
    "ipc": {"ipc"},
    "daemon": {"daemon", "ipc", "changes", "editor", "policy", "tools", "agent", "llm", "__init__", "long_lived"},
    "exec": {"exec", "policy", "tools", "agent", "llm", "__init__"},
    "mcp": {"mcp", "ipc", "exec", "policy", "tools", "agent", "llm", "__init__"},
    "demo": {"demo", "daemon", "editor", "llm", "agent", "__init__"},
    # the package root: the version, the console entry point and the processes' start-up helper
    "__init__.py": set(),
    "__main__.py": {"cli"},
    "cli.py": {"__init__", "daemon", "exec", "mcp", "demo", "llm", "long_lived"},
    "long_lived.py": set(),
}
"""layer -> the ``pi_lsp`` layers it may import (``__init__`` is the package root: the version)."""

THIRD_PARTY: dict[str, set[str]] = {
    "llm": {"pydantic", "httpx"},
    "agent": {"pydantic"},
    "tools": {"pydantic", "PIL", "pathspec"},
    "policy": {"pydantic", "pathspec", "tree_sitter", "tree_sitter_bash"},
    "editor": {"pydantic", "pygls", "lsprotocol", "cattrs"},
    "ipc": set(),
    "changes": {"pydantic"},
    "daemon": {"pydantic", "pygls", "lsprotocol", "cattrs", "platformdirs"},
    "exec": {"pydantic"},
    "mcp": {"pydantic", "mcp", "mcp_types", "anyio"},
    "demo": {"pydantic", "pygls", "lsprotocol", "cattrs", "textkit"},
    "__init__.py": set(),
    "__main__.py": set(),
    "cli.py": set(),
    "long_lived.py": set(),
}
"""layer -> third-party top-level modules it may import: only ``llm/`` reaches httpx, only the editor
bridge, the daemon and the demo reach pygls/lsprotocol, only ``mcp/`` reaches the MCP SDK, only
``policy/`` reaches tree-sitter (the bash grammar of the command judge)."""

_STDLIB = frozenset(sys.stdlib_module_names)


def _layer(rel: Path) -> str:
    return rel.parts[0] if len(rel.parts) > 1 else rel.name


def _absolute(module: str | None, level: int, rel: Path, root: str) -> str:
    """The absolute dotted name of an import ``from <level dots><module> import ...`` in ``rel``."""
    if level == 0:
        return module or ""
    package = [root, *rel.parts[:-1]]
    if level > 1:
        package = package[: len(package) - (level - 1)]
    return ".".join(package + ([module] if module else []))


def imported_names(path: Path, root_dir: Path, root: str = "pi_lsp") -> set[str]:
    """Every module name ``path`` imports, absolute, with relative imports resolved.

    ``from a import b`` yields both ``a`` and ``a.b`` (``b`` may be a submodule). Calls of
    ``importlib.import_module("x")`` / ``__import__("x")`` with a literal name count too.
    """
    rel = path.relative_to(root_dir)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module, node.level, rel, root)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if fname in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                names.add(node.args[0].value)
    return {n for n in names if n}


def violations(root_dir: Path, root: str = "pi_lsp") -> list[str]:
    """Each import that breaks the allowlists, as ``"path imports name (rule)"``; [] when clean."""
    found: list[str] = []
    for path in sorted(root_dir.rglob("*.py")):
        rel = path.relative_to(root_dir)
        layer = _layer(rel)
        if layer not in INTERNAL:
            found.append(f"{rel.as_posix()}: layer {layer!r} is not in design.md's table")
            continue
        for name in sorted(imported_names(path, root_dir, root)):
            top = name.split(".")[0]
            if top == root:
                parts = name.split(".")
                target = parts[1] if len(parts) > 1 else "__init__"
                if target == "__version__":
                    target = "__init__"
                allowed = INTERNAL[layer] | {layer.removesuffix(".py")}
                if target not in allowed:
                    found.append(f"{rel.as_posix()} imports {name} ({layer} may import {sorted(allowed)})")
            elif top not in _STDLIB and top not in THIRD_PARTY[layer] and top != "__future__":
                found.append(f"{rel.as_posix()} imports {name} (third-party, not allowed for {layer})")
    return found


def test_every_module_respects_the_layers() -> None:
    assert violations(PACKAGE) == []


def test_the_package_root_holds_only_the_version_the_entry_point_and_its_start_up_helper() -> None:
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "cli.py", "long_lived.py"]


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("agent/bad.py", "import pygls.server\n", "pygls.server"),
        ("agent/bad.py", "def f():\n    from httpx import AsyncClient\n", "httpx"),
        ("agent/bad.py", "from ..tools import bash\n", "pi_lsp.tools"),
        ("agent/bad.py", "from .. import editor\n", "pi_lsp.editor"),
        ("tools/sub/bad.py", "from ...editor.documents import DocumentStore\n", "pi_lsp.editor.documents"),
        ("tools/bad.py", "import importlib\nimportlib.import_module('pi_lsp.daemon.server')\n", "pi_lsp.daemon"),
        ("exec/bad.py", "try:\n    import lsprotocol.types\nexcept ImportError:\n    pass\n", "lsprotocol"),
        ("llm/bad.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pi_lsp.agent import loop\n", "pi_lsp.agent"),
        ("daemon/bad.py", "import mcp.server\n", "mcp.server"),
        ("exec/bad.py", "from pi_lsp.daemon import settings\n", "pi_lsp.daemon"),
        ("cli.py", "import pi_lsp.tools\n", "pi_lsp.tools"),
        ("__init__.py", "from pi_lsp.daemon import server\n", "pi_lsp.daemon"),
        ("newface/x.py", "import os\n", "newface"),
    ],
)
def test_a_planted_violation_fails(tmp_path: Path, module: str, source: str, expected: str) -> None:
    root = tmp_path / "pi_lsp"
    target = root / module
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(source, encoding="utf-8")
    found = violations(root)
    assert any(expected in line for line in found), found


def test_a_clean_planted_tree_passes(tmp_path: Path) -> None:
    root = tmp_path / "pi_lsp"
    (root / "tools").mkdir(parents=True)
    (root / "tools" / "ok.py").write_text("from ..agent import tool\nfrom . import read\nimport pydantic\n")
    assert violations(root) == []


def test_exec_imports_no_protocol_or_http_library() -> None:
    code = (
        "import sys, pi_lsp.exec.jsonl_host, pi_lsp.tools\n"
        "from pi_lsp.tools import create_tools\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol', 'httpx')]\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
