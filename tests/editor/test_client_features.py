"""``ClientFeatures`` reads the editor-knowledge capabilities (issue 17, KNOWLEDGE_SPEC)."""

from __future__ import annotations

from pi_lsp.editor.connection import ClientFeatures


def _params(pi: object) -> dict:
    return {"capabilities": {"experimental": {"pi": pi}}, "clientInfo": {"name": "x"}}


def test_diagnostics_and_language_requests_are_read() -> None:
    features = ClientFeatures.from_initialize(_params({
        "diagnostics": True,
        "languageRequests": ["textDocument/definition", "textDocument/hover", "textDocument/definition"],
    }))
    assert features.diagnostics is True
    assert features.language_requests == ("textDocument/definition", "textDocument/hover")


def test_missing_or_malformed_values_mean_not_offered() -> None:
    assert ClientFeatures.from_initialize(_params({})).language_requests == ()
    features = ClientFeatures.from_initialize(_params({"diagnostics": "yes", "languageRequests": "textDocument/hover"}))
    assert features.diagnostics is False and features.language_requests == ()
    mixed = ClientFeatures.from_initialize(_params({"languageRequests": [1, None, "textDocument/rename"]}))
    assert mixed.language_requests == ("textDocument/rename",)
    assert ClientFeatures.from_initialize({}).diagnostics is False
