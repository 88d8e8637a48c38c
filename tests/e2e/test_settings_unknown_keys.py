"""Unknown and misspelt ``pi`` settings through the real daemon over stdio: each key is reported
once with the setting probably meant, the session goes on, and every ``changes.*`` field is named."""

from __future__ import annotations

from lsprotocol import types

from pi_lsp.demo.fake_editor import FakeEditor

from tests.e2e.daemon_support import wait_until

REVEIW = "pi.edit.reveiw: unknown setting, ignored; did you mean pi.edit.review?"
MODLE = "pi.modle: unknown setting, ignored; did you mean pi.model?"


async def _settled(editor: FakeEditor) -> None:
    """Wait until the daemon handled what came before (requests are answered in order)."""
    await editor.request("pi/listTools", {})


async def test_a_misspelt_key_is_reported_once_with_the_setting_meant_and_the_session_goes_on(make_editor) -> None:
    pi = {"edit": {"reveiw": "before"}, "activeTools": ["read", "ls"]}
    editor: FakeEditor = await make_editor(initialization_options={"pi": pi}, configuration={"pi": pi})
    assert await wait_until(lambda: editor.shown_messages)
    await _settled(editor)
    # initialize and initialized both read it: one message
    assert editor.shown_messages == [REVEIW]
    listing = await editor.request("pi/listTools", {})
    assert [t["name"] for t in listing["tools"] if t["active"]] == ["read", "ls"]  # the rest applies

    # a change of another setting does not repeat it; a new misspelling is reported alone
    editor.configuration = {"pi": {**pi, "modle": "m", "activeTools": ["read"]}}
    editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert await wait_until(lambda: len(editor.shown_messages) == 2)
    assert editor.shown_messages[1] == MODLE
    editor.configuration = {"pi": {**pi, "modle": "m", "activeTools": ["read", "grep"]}}
    editor.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))

    async def active() -> list[str]:
        listing = await editor.request("pi/listTools", {})
        return [t["name"] for t in listing["tools"] if t["active"]]

    for _ in range(200):
        if await active() == ["read", "grep"]:
            break
    assert await active() == ["read", "grep"]
    assert len(editor.shown_messages) == 2, editor.shown_messages
    assert sum(REVEIW in m for m in editor.log_messages) == 1, editor.log_messages


async def test_each_bad_changes_field_is_named(make_editor) -> None:
    pi = {"changes": {"maxFileBytes": -1, "maxTotalBytes": "lots", "gitTimeoutSeconds": 2}}
    editor: FakeEditor = await make_editor(initialization_options={"pi": pi}, configuration={"pi": pi})
    assert await wait_until(lambda: editor.shown_messages)
    await _settled(editor)
    assert len(editor.shown_messages) == 1, editor.shown_messages
    lines = editor.shown_messages[0].split("\n")
    assert lines[0] == "2 problems in the pi settings:"
    assert lines[1].startswith("- pi.changes.maxFileBytes: ") and lines[2].startswith("- pi.changes.maxTotalBytes: ")
