"""The bash spill file stops at ``bash_max_spill_bytes`` (a user's ``yes`` wrote 2 GB in 24 s).

Past the cap the totals and the in-memory tail go on, so the result still ends with the command's
last lines and counts every line; the notice says the file holds only the first bytes.
"""

from __future__ import annotations

import re
from pathlib import Path

from pi_lsp.tools.environment import ToolSettings
from pi_lsp.tools.shell.output_buffer import OutputBuffer

from tests.tools.bash_support import make_env, run_bash

CAP = 64 * 1024


def test_default_cap_is_256_mib() -> None:
    assert ToolSettings().bash_max_spill_bytes == 256 * 1024 * 1024


async def test_runaway_output_spill_file_stops_at_the_cap(tmp_path: Path) -> None:
    env = make_env(tmp_path, bash_max_spill_bytes=CAP)
    # about 4.9 MB: lines "1" .. "700000", the last one tells whether the tail kept going
    out = await run_bash(env, "seq 1 700000")
    assert not out.is_error
    match = re.search(r"\[Showing lines (\d+)-700000 of 700000\. Full output \(first 64\.0KB\): (\S+)\]$", out.text)
    assert match, out.text[-300:]
    spill = Path(match.group(2))
    data = spill.read_bytes()
    assert len(data) == CAP  # exactly the first CAP raw bytes, nothing after
    expected = "".join(f"{n}\n" for n in range(1, 20000)).encode()[:CAP]
    assert data == expected
    assert out.text.split("\n\n[")[0].endswith("699999\n700000")  # no phantom line (issue 12)
    assert out.details["fullOutputPath"] == str(spill)


async def test_output_under_the_cap_is_spilled_whole_with_the_usual_notice(tmp_path: Path) -> None:
    env = make_env(tmp_path, bash_max_spill_bytes=CAP)
    out = await run_bash(env, "seq 1 5000")  # 23893 bytes: truncated by lines, under the cap
    match = re.search(r"Full output: (\S+)\]$", out.text)
    assert match, out.text[-200:]
    assert Path(match.group(1)).read_bytes() == "".join(f"{n}\n" for n in range(1, 5001)).encode()


def test_buffer_cap_cuts_inside_a_chunk_and_keeps_counting(tmp_path: Path) -> None:
    buffer = OutputBuffer(tmp_path, max_lines=10, max_bytes=100, max_spill_bytes=250)
    for index in range(100):
        buffer.feed(1 if index % 2 else 2, b"%09d\n" % index)  # 10 bytes each, both streams
    buffer.finish()
    snapshot = buffer.snapshot()
    buffer.close()
    assert buffer.spill_capped and buffer.spill_bytes == 250
    assert snapshot.full_output_path is not None
    assert snapshot.full_output_path.read_bytes() == b"".join(b"%09d\n" % i for i in range(25))
    assert buffer.total_raw_bytes == 1000 and snapshot.truncation.total_lines == 100
    assert snapshot.content.endswith("000000098\n000000099")


def test_no_cap_keeps_everything(tmp_path: Path) -> None:
    buffer = OutputBuffer(tmp_path, max_lines=10, max_bytes=100)
    chunks = [b"%09d\n" % i for i in range(100)]
    for chunk in chunks:
        buffer.feed(1, chunk)
    buffer.finish()
    snapshot = buffer.snapshot()
    buffer.close()
    assert not buffer.spill_capped
    assert snapshot.full_output_path is not None and snapshot.full_output_path.read_bytes() == b"".join(chunks)
