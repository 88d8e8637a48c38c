"""How `pi-lsp exec` writes an answer line: compact JSON, the values `to_wire` gives, always valid."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

from pi_lsp.exec.jsonl_host import encode_line
from pi_lsp.llm.types import TextContent, ToolResultMessage, to_wire


def _message(text: str, details: Any) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id="c1", tool_name="read", content=[TextContent(text=text)], details=details, is_error=False
    )


def test_a_result_line_is_compact_utf8_json_with_the_values_of_to_wire() -> None:
    message = _message("é ü \u2028 \"q\"\n", {"lines": 3, "nested": [1, None, {"k": 1e16}], 7: (1, 2)})
    line = encode_line(message)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert b", " not in line and b'": ' not in line  # as JSON.stringify writes it
    assert "é ü".encode() in line  # non-ASCII as UTF-8, not \\u escapes
    expected = json.loads(json.dumps(to_wire(message)))
    assert json.loads(line) == expected


def test_non_finite_numbers_are_written_as_null() -> None:
    line = encode_line(_message("x", {"a": math.nan, "b": math.inf, "c": [-math.inf]}))
    assert json.loads(line)["details"] == {"a": None, "b": None, "c": [None]}


def test_a_lone_surrogate_is_escaped_and_the_line_stays_valid_json() -> None:
    line = encode_line(_message("a\ud800b", {"k": "\udfff"}))
    line.decode("ascii")  # escaped, since UTF-8 cannot carry it
    value = json.loads(line)
    assert value["content"][0]["text"] == "a\ud800b" and value["details"] == {"k": "\udfff"}


def test_dict_answers_are_compact_too() -> None:
    line = encode_line({"results": [{"role": "toolResult", "toolCallId": None, "text": "ü"}]})
    assert line == '{"results":[{"role":"toolResult","toolCallId":null,"text":"ü"}]}\n'.encode()


def test_a_read_through_the_real_process_answers_one_compact_line_and_a_bom_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("ünï\n", encoding="utf-8")
    call = {"toolCall": {"id": "r1", "name": "read", "arguments": {"path": "a.txt"}}}
    done = subprocess.run(  # a byte order mark first, as a Windows tool writes one: ignored (RFC 8259 8.1)
        [sys.executable, "-m", "pi_lsp", "exec", "--cwd", str(tmp_path)],
        input=b"\xef\xbb\xbf" + (json.dumps(call) + "\n").encode(), capture_output=True, timeout=60, check=True,
    )
    [line] = done.stdout.splitlines()
    assert line.startswith(b'{"role":"toolResult","toolCallId":"r1","toolName":"read","content":[{"type":"text","text":"\xc3\xbcn\xc3\xaf\\n"}]')
    assert json.loads(line)["isError"] is False
