"""Bench: the tool pipeline's own overhead per call (lookup, validation, hooks, task, events, result).

Target (issue 2, Speed): the in-process overhead of a small ``read`` (20 lines of a 500-line file)
through :class:`ToolPipeline` is <= 0.2 ms per call. Overhead = median time of
``pipeline.execute(call)`` minus the median time of ``ReadTool.execute(args, ctx)`` called directly
with pre-validated args, measured alternately in the same process. Also printed: a no-op tool
through the pipeline (pure pipeline cost) and a batch of 10 calls.

Run: ``python3 bench/bench_pipeline.py [calls]``. Prints times and ratios; never asserts.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pydantic import BaseModel, Field  # noqa: E402

from pi_lsp.agent.pipeline import ToolPipeline  # noqa: E402
from pi_lsp.agent.schema import json_schema_of  # noqa: E402
from pi_lsp.agent.tool import ToolContext, ToolResult  # noqa: E402
from pi_lsp.agent.validation import validator_for  # noqa: E402
from pi_lsp.llm.types import ToolCall  # noqa: E402
from pi_lsp.tools import create_tools  # noqa: E402
from pi_lsp.tools.environment import ToolEnvironment  # noqa: E402
from pi_lsp.tools.file_io.local_files import LocalFileAccess  # noqa: E402

TARGET_MS = 0.2
ARGS = {"path": "file.txt", "offset": 100, "limit": 20}


class NoopArgs(BaseModel):
    path: str = Field(description="ignored")


class NoopTool:
    name = "noop"
    label = "noop"
    description = "does nothing"
    args_model = NoopArgs
    parameters = json_schema_of(NoopArgs)
    execution_mode = "parallel"

    def prepare_arguments(self, raw: Any) -> Any:
        return raw

    async def execute(self, args: Any, ctx: ToolContext) -> ToolResult:
        return ToolResult.text("ok")


async def _median_ms(make: Any, calls: int) -> float:
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await make()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


async def main(calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "file.txt").write_text("".join(f"line {i} of the bench file\n" for i in range(500)))
        env = ToolEnvironment(cwd=root, files=LocalFileAccess(), temp_dir=root)
        tools = {tool.name: tool for tool in create_tools(env)}
        read = tools["read"]
        pipeline = ToolPipeline([read, NoopTool()])
        events: list[dict[str, Any]] = []
        call = ToolCall(id="c", name="read", arguments=ARGS)
        noop = ToolCall(id="n", name="noop", arguments={"path": "x"})
        args = validator_for(read.args_model).validate("read", ARGS)

        async def through_pipeline() -> None:
            result = await pipeline.execute(call, emit=events.append)
            assert not result.is_error, result
            events.clear()

        async def direct() -> None:
            await read.execute(args, ToolContext(tool_call_id="c"))

        async def noop_call() -> None:
            await pipeline.execute(noop, emit=events.append)
            events.clear()

        async def batch() -> None:
            await pipeline.execute_batch([call] * 10, emit=events.append)
            events.clear()

        for fn in (through_pipeline, direct, noop_call):  # warm up
            await _median_ms(fn, 200)
        piped, raw = [], []
        for _ in range(5):  # alternate to share the machine's noise
            piped.append(await _median_ms(through_pipeline, calls // 5))
            raw.append(await _median_ms(direct, calls // 5))
        pipe_ms, direct_ms = statistics.median(piped), statistics.median(raw)
        noop_ms = await _median_ms(noop_call, calls)
        batch_ms = await _median_ms(batch, max(calls // 10, 20))
    overhead = pipe_ms - direct_ms
    print(f"read via pipeline : {pipe_ms:.3f} ms/call (median of {calls})")
    print(f"read direct       : {direct_ms:.3f} ms/call")
    print(f"pipeline overhead : {overhead:.3f} ms/call  target <= {TARGET_MS} ms  ratio {overhead / TARGET_MS:.2f}")
    print(f"noop via pipeline : {noop_ms:.3f} ms/call  ratio to target {noop_ms / TARGET_MS:.2f}")
    print(f"batch of 10 reads : {batch_ms:.3f} ms/batch ({batch_ms / 10:.3f} ms/call)")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
