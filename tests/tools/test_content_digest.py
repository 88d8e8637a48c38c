"""sha256_hex answers what hashlib answers, remembered or not (pi_lsp.tools.file_io.content_digest)."""

from __future__ import annotations

import hashlib

import pytest

from pi_lsp.tools.file_io import content_digest
from pi_lsp.tools.file_io.content_digest import MEMO_MAX_BYTES, MEMO_MIN_BYTES, sha256_hex


def _expected(data: bytes | bytearray) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("size", [0, 1, MEMO_MIN_BYTES - 1, MEMO_MIN_BYTES, 3 * MEMO_MIN_BYTES + 7])
def test_digests_are_hashlib_s(size: int) -> None:
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    assert sha256_hex(data) == _expected(data)
    assert sha256_hex(bytes(data)) == _expected(data)  # an equal copy: the same digest


def test_an_equal_content_is_answered_from_the_memo_and_a_different_one_is_hashed(monkeypatch: pytest.MonkeyPatch) -> None:
    before = b"line number 1 with text\n" * 40_000
    after = before.replace(b"line number 1", b"LINE NUMBER 1", 1)  # same length, one byte run differs
    want_before, want_after = _expected(before), _expected(after)
    assert sha256_hex(before) == want_before
    hashed: list[int] = []
    real_sha256 = hashlib.sha256
    monkeypatch.setattr(content_digest.hashlib, "sha256", lambda data: hashed.append(len(data)) or real_sha256(data))
    assert sha256_hex(bytes(bytearray(before))) == want_before  # equal content, another object
    assert hashed == []
    assert sha256_hex(after) == want_after
    assert hashed == [len(after)]
    assert sha256_hex(after) == want_after and hashed == [len(after)]
    assert sha256_hex(before) == want_before and len(hashed) == 2  # one content remembered


def test_mutable_and_huge_contents_are_not_remembered() -> None:
    changing = bytearray(b"a" * MEMO_MIN_BYTES)
    assert sha256_hex(changing) == _expected(changing)
    changing[0:1] = b"b"
    assert sha256_hex(changing) == _expected(changing)
    huge = b"z" * (MEMO_MAX_BYTES + 1)
    assert sha256_hex(huge) == _expected(huge)
    assert content_digest._last is None or content_digest._last[0] is not huge
