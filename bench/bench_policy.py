"""Bench: what the approval hook adds to a tool call that needs no prompt.

Measured alternately in one process, median of many calls: a small ``read`` inside the workspace
through a :class:`ToolPipeline` without hooks, with a no-op before hook (the pipeline's own cost of
any hook) and with :class:`~pi_lsp.policy.approvals.ApprovalPolicy` (default rules, journal to a
list); a read-only ``bash`` decision (``cat file.txt``, judged but not run: tree-sitter plus one
bash process expanding the words), the sandbox launch (the scan for protected files to
mask, on this repository as the workspace), and a ``cat`` run plainly vs in bubblewrap (when
it works here; ``cat README.md`` in this repository). Target: the policy
adds at most 0.1 ms per read beyond the no-op hook (a policy must not make the daemon's read slower
than the peer's, see bench_read_write.py).

Run: ``python3 bench/bench_policy.py [calls]``. Prints times and ratios; never asserts.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pi_lsp.agent.pipeline import ToolPipeline  # noqa: E402
from pi_lsp.llm.types import ToolCall  # noqa: E402
from pi_lsp.policy.approvals import ApprovalPolicy  # noqa: E402
from pi_lsp.policy.call_scope import call_scope  # noqa: E402
from pi_lsp.policy.rules import decide  # noqa: E402
from pi_lsp.tools import TOOL_NAMES, create_tools  # noqa: E402
from pi_lsp.tools.environment import ToolEnvironment  # noqa: E402
from pi_lsp.tools.file_io.local_files import LocalFileAccess  # noqa: E402

TARGET_MS = 0.1


async def main(calls: int) -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-policy-"))
    (root / "file.txt").write_text("".join(f"line {i}\n" for i in range(500)), encoding="utf-8")
    env = ToolEnvironment(cwd=root, files=LocalFileAccess(), temp_dir=root / ".tmp", workspace_folders=[root])
    plain = ToolPipeline(create_tools(env))
    hooked = ToolPipeline(create_tools(env))
    guarded = ToolPipeline(create_tools(env))

    async def noop(ctx: object, signal: object) -> None:
        return None

    hooked.add_before_hook(noop, first=True)  # type: ignore[arg-type]
    journal: list[dict] = []
    policy = ApprovalPolicy(env, TOOL_NAMES, journal=journal.append)
    policy.configure()
    guarded.add_before_hook(policy, first=True)
    call = ToolCall(id="r", name="read", arguments={"path": "file.txt", "offset": 100, "limit": 20})
    without: list[float] = []
    with_noop: list[float] = []
    with_policy: list[float] = []
    for _ in range(calls):
        for pipeline, times in ((plain, without), (hooked, with_noop), (guarded, with_policy)):
            start = time.perf_counter()
            await pipeline.execute(call)
            times.append(time.perf_counter() - start)
    bash_decisions: list[float] = []
    for _ in range(min(calls, 200)):
        start = time.perf_counter()
        scope = call_scope("bash", SimpleNamespace(command="cat file.txt"), root)
        assert scope is not None
        decide(scope, policy.rules, policy.protected, policy.workspace, root)
        bash_decisions.append(time.perf_counter() - start)
    a, n, b = (statistics.median(t) * 1000 for t in (without, with_noop, with_policy))
    bash_ms = statistics.median(bash_decisions) * 1000
    print(f"read through the pipeline: {a:.3f} ms without hooks, {n:.3f} ms with a no-op hook, "
          f"{b:.3f} ms with the policy (ratio to no hooks {b / a:.2f})")
    print(f"policy cost per read beyond a no-op hook: {b - n:.3f} ms (target <= {TARGET_MS} ms)")
    print(f"read-only bash decision (cat file.txt): {bash_ms:.3f} ms")
    print(f"journaled decisions: {len(journal)}")
    sandbox_bench(root, min(calls, 100))


def sandbox_bench(root: Path, runs: int) -> None:
    """The mask scan over this repository, and ``cat`` plain vs in bubblewrap."""
    from pi_lsp.policy.protected_paths import ProtectedPaths
    from pi_lsp.policy.sandbox import Sandbox
    from pi_lsp.policy.workspace_scope import WorkspaceScope

    scope = WorkspaceScope(lambda: [REPO])
    guards = ProtectedPaths()
    sandbox = Sandbox("auto")

    def guard(path: str) -> str | None:
        return guards.match(Path(path), scope, path)

    scans: list[float] = []
    cached: list[float] = []
    for _ in range(runs):
        for times in (scans, cached):
            if times is scans:
                sandbox.invalidate()
            start = time.perf_counter()
            launch = sandbox.launch(
                git=False, roots=scope.roots(), cwd=REPO, protected=guard, may_protect=guards.may_protect_name
            )
            times.append(time.perf_counter() - start)
    entries = sum(len(d) + len(f) for _, d, f in __import__("os").walk(REPO))
    print(f"sandbox launch with a mask scan of {entries} entries: {statistics.median(scans) * 1000:.2f} ms; "
          f"with the scan cached: {statistics.median(cached) * 1000:.3f} ms")
    if launch is None or not launch.prefix:
        print(f"no sandbox here: {sandbox.status.reason}")
        return
    import subprocess

    plain: list[float] = []
    boxed: list[float] = []
    for _ in range(runs):
        for argv, times in ((["/bin/bash", "-c", "cat README.md"], plain), ([*launch.prefix, "/bin/bash", "-c", "cat README.md"], boxed)):
            start = time.perf_counter()
            subprocess.run(argv, cwd=REPO, stdout=subprocess.DEVNULL, check=True)
            times.append(time.perf_counter() - start)
    p, b = statistics.median(plain) * 1000, statistics.median(boxed) * 1000
    print(f"cat README.md: {p:.2f} ms plain, {b:.2f} ms in bubblewrap (ratio {b / p:.2f})")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
