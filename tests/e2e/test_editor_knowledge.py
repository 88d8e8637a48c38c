"""The language tools through a real daemon, with FakeEditor running a real pylsp as the editor's
language server (issue 17, KNOWLEDGE_SPEC): definition/references across files, symbols, hover,
diagnostics, and the clear errors (symbol not on the line, no server for the file, a server that
never answers, a client without the capability)."""

from __future__ import annotations

from pathlib import Path

from pi_lsp.demo.fake_editor import ALL_PI_FEATURES, FakeEditor
from tests.e2e.language_server_support import FAST_KNOWLEDGE, require_pylsp

UTIL = "def helper(x):\n    return x + 1\n"
APP = "from util import helper\n\n\ndef main():\n    return helper(2)\n"


def _project(root: Path) -> None:
    (root / "util.py").write_text(UTIL, encoding="utf-8")
    (root / "app.py").write_text(APP, encoding="utf-8")
    (root / "notes.txt").write_text("helper notes\n", encoding="utf-8")


async def _editor(make_editor, root: Path, **options) -> FakeEditor:
    options.setdefault("language_server", require_pylsp())
    return await make_editor(root, initialization_options={"pi": FAST_KNOWLEDGE}, **options)


async def test_definition_and_references_across_two_files(make_editor, tmp_path: Path) -> None:
    _project(tmp_path)
    editor = await _editor(make_editor, tmp_path)
    editor.open("app.py")
    definition = await editor.call("definition", {"path": "app.py", "line": 5, "symbol": "helper"})
    assert definition["isError"] is False, editor.result_text(definition)
    assert editor.result_text(definition) == "util.py:1: def helper(x):"
    references = await editor.call("references", {"path": "util.py", "line": 1, "symbol": "helper"})
    assert references["isError"] is False, editor.result_text(references)
    assert editor.result_text(references).splitlines() == [
        "app.py:1: from util import helper",
        "app.py:5: return helper(2)",
        "util.py:1: def helper(x):",
    ]
    # what went over the wire: the spec's method and params, position resolved from the symbol
    request = editor.language_requests[0]
    assert request["method"] == "textDocument/definition"
    assert request["params"]["position"] == {"line": 4, "character": 11}
    assert editor.language_requests[1]["params"]["context"] == {"includeDeclaration": True}


async def test_positions_are_converted_for_a_utf8_client(make_editor, tmp_path: Path) -> None:
    # Neovim-like: pi-lsp negotiates UTF-8 with the editor, pylsp speaks UTF-16; the editor converts
    (tmp_path / "util.py").write_text("def helper(x):\n    return x\n", encoding="utf-8")
    (tmp_path / "app.py").write_text("from util import helper\nname = '😀é'; v = helper(2)\n", encoding="utf-8")
    editor = await _editor(make_editor, tmp_path, profile="neovim")
    assert editor.buffers.encoding == "utf-8"
    result = await editor.call("references", {"path": "app.py", "line": 2, "symbol": "helper"})
    assert result["isError"] is False, editor.result_text(result)
    assert editor.language_requests[0]["params"]["position"] == {"line": 1, "character": 21}  # UTF-8 bytes (17 code points)
    assert editor.result_text(result).splitlines() == [
        "app.py:1: from util import helper", "app.py:2: name = '😀é'; v = helper(2)", "util.py:1: def helper(x):",
    ]
    editor.open("app.py")
    renamed = await editor.call("rename", {"path": "app.py", "line": 2, "symbol": "helper", "newName": "aide"})
    assert renamed["isError"] is False, editor.result_text(renamed)
    assert editor.text("app.py") == "from util import aide\nname = '😀é'; v = aide(2)\n"


async def test_symbols_and_hover(make_editor, tmp_path: Path) -> None:
    _project(tmp_path)
    editor = await _editor(make_editor, tmp_path)
    symbols = await editor.call("symbols", {"path": "app.py"})
    assert symbols["isError"] is False, editor.result_text(symbols)
    assert "5: function main" not in editor.result_text(symbols)
    assert "4: function main" in editor.result_text(symbols).splitlines()
    hover = await editor.call("hover", {"path": "app.py", "line": 5, "symbol": "helper"})
    assert hover["isError"] is False, editor.result_text(hover)
    assert "helper(x)" in editor.result_text(hover)


async def test_symbol_not_on_the_line_shows_the_line(make_editor, tmp_path: Path) -> None:
    _project(tmp_path)
    editor = await _editor(make_editor, tmp_path)
    result = await editor.call("definition", {"path": "app.py", "line": 4, "symbol": "helper"})
    assert result["isError"] is True
    assert editor.result_text(result) == (
        "`helper` is not on line 4 of app.py. Line 4 is:\n4: def main():\n"
        "Give the symbol's exact text as it appears on that line, or read the file to find the right line."
    )
    assert editor.language_requests == []  # nothing was asked


async def test_file_without_a_language_server(make_editor, tmp_path: Path) -> None:
    _project(tmp_path)
    editor = await _editor(make_editor, tmp_path)
    result = await editor.call("definition", {"path": "notes.txt", "line": 1, "symbol": "helper"})
    assert result["isError"] is True
    assert editor.result_text(result).startswith("No language server in the editor handles textDocument/definition for notes.txt.")
    diagnostics = await editor.call("diagnostics", {"path": "notes.txt"})
    assert diagnostics["isError"] is True
    assert "No language server in the editor checks notes.txt" in editor.result_text(diagnostics)


async def test_a_server_that_never_answers_times_out_and_is_cancelled(make_editor, tmp_path: Path) -> None:
    _project(tmp_path)
    editor = await make_editor(
        tmp_path, language_server=require_pylsp(), language_server_mode="silent",
        initialization_options={"pi": {"languageServer": {"timeoutSeconds": 0.5}}},
    )
    result = await editor.call("definition", {"path": "app.py", "line": 5, "symbol": "helper"})
    assert result["isError"] is True
    text = editor.result_text(result)
    assert "did not answer textDocument/definition for app.py in time" in text
    assert "within 0.5 s (pi.languageServer.timeoutSeconds); the request was cancelled" in text
    # the daemon still answers afterwards
    assert (await editor.call("read", {"path": "util.py"}))["isError"] is False


async def test_client_without_the_capability_lists_the_tools_inactive(make_editor, tmp_path: Path) -> None:
    _project(tmp_path)
    editor = await make_editor(tmp_path, experimental_pi=dict(ALL_PI_FEATURES))
    listing = {tool["name"]: tool for tool in (await editor.request("pi/listTools", {}))["tools"]}
    for name, method in [
        ("definition", "textDocument/definition"), ("references", "textDocument/references"),
        ("rename", "textDocument/rename"), ("symbols", "textDocument/documentSymbol"), ("hover", "textDocument/hover"),
    ]:
        assert listing[name]["active"] is False
        assert listing[name]["unavailable"] == (
            f"the editor does not offer {method} to pi-lsp (capabilities.experimental.pi.languageRequests)"
        )
    assert listing["diagnostics"]["unavailable"] == (
        "the editor does not offer its diagnostics to pi-lsp (capabilities.experimental.pi.diagnostics)"
    )
    assert "unavailable" not in listing["read"]
    result = await editor.call("definition", {"path": "app.py", "line": 5, "symbol": "helper"})
    assert result["isError"] is True
    assert editor.result_text(result) == (
        "Tool definition not found (definition is unavailable: the editor does not offer "
        "textDocument/definition to pi-lsp (capabilities.experimental.pi.languageRequests))"
    )


async def test_advertised_tools_are_active_by_default_unless_active_tools_says_otherwise(make_editor, tmp_path: Path) -> None:
    _project(tmp_path)
    editor = await _editor(make_editor, tmp_path)
    listing = {tool["name"]: tool for tool in (await editor.request("pi/listTools", {}))["tools"]}
    assert [name for name, tool in listing.items() if tool["active"]] == [
        "read", "bash", "edit", "write", "diagnostics", "definition", "references", "rename", "symbols", "hover",
    ]
    assert all("unavailable" not in tool for tool in listing.values())
    chosen = await make_editor(
        tmp_path, language_server=require_pylsp(),
        initialization_options={"pi": {**FAST_KNOWLEDGE, "activeTools": ["read", "definition"]}},
    )
    listing = (await chosen.request("pi/listTools", {}))["tools"]
    assert [tool["name"] for tool in listing if tool["active"]] == ["read", "definition"]


async def test_the_diagnostics_tool_for_a_file_and_for_the_workspace(make_editor, tmp_path: Path) -> None:
    _project(tmp_path)
    (tmp_path / "bad.py").write_text("import os\n\nprint(missing)\n", encoding="utf-8")
    editor = await _editor(make_editor, tmp_path)
    editor.open("bad.py")
    assert await editor.wait_diagnostics("bad.py")
    result = await editor.call("diagnostics", {"path": "bad.py"})
    assert result["isError"] is False, editor.result_text(result)
    assert editor.result_text(result) == (
        "2 problems (1 error) in 1 file:\n"
        "bad.py:3: error: undefined name 'missing' (pyflakes)\n"
        "bad.py:1: warning: 'os' imported but unused (pyflakes)"
    )
    clean = await editor.call("diagnostics", {"path": "util.py"})
    assert editor.result_text(clean) == "No problems reported for util.py."
    workspace = await editor.call("diagnostics", {})
    assert "bad.py:3: error: undefined name 'missing' (pyflakes)" in editor.result_text(workspace)


async def test_a_protected_file_is_asked_about_like_read(make_editor, tmp_path: Path) -> None:
    _project(tmp_path)
    (tmp_path / ".env.py").write_text("SECRET = 1\n", encoding="utf-8")
    editor = await _editor(make_editor, tmp_path, message_answer="Deny")
    result = await editor.call("symbols", {"path": ".env.py"})
    assert result["isError"] is True and "declined" in editor.result_text(result)
    assert len(editor.message_requests) == 1 and ".env.py" in editor.message_requests[0]
    assert editor.language_requests == []
