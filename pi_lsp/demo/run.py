"""``pi-lsp demo``: the whole loop, end to end, with no network (design.md section 6).

1. Copy the bundled sample project (``pi_lsp/demo/sample``: its slugify tests fail until accents
   are folded and dashes trimmed) into a temp folder.
2. Start ``pi-lsp replay --session pi_lsp/demo/session.jsonl --port 0 --format {provider}`` as a
   subprocess and read its URL from its first stdout line (skipped when ``--base-url`` points at a
   real endpoint). ``--provider anthropic`` runs the same session over Anthropic's Messages API
   (``pi.provider: "anthropic"``; the replay streams Messages API events).
3. Start the daemon over stdio with :class:`~pi_lsp.demo.fake_editor.FakeEditor` as the client
   (UTF-16 columns, versioned edits, saving): it opens ``textkit/slug.py`` (clean) and
   ``CHANGELOG.md``, and the "user" types an unsaved line into ``CHANGELOG.md``, a dirty buffer the
   agent must not clobber or save. grep and find are activated for the session. The editor runs a
   real language server, ``pylsp`` (the ``demo`` extra), for its Python buffers and offers it to
   pi-lsp (issue 17: ``pi/diagnostics``, ``pi/languageRequest``, ``pi/diagnosticsChanged``).
4. Send ``pi/prompt`` and print a live log: assistant text as it streams, each tool call with its
   arguments and a result summary, each ``workspace/applyEdit`` (label, ranges, version) and each
   save. The recorded model's first fix of ``slug.py`` has a typo: the edit's result ends with the
   error pylsp reports for it (``undefined name 'titel'``), and the next turn fixes it.
5. Review and rewind (issue 18): ask ``pi/changes`` for the turn's change set and print each
   file with its state, the tool calls that changed it and its hunks; then take back one hunk,
   the agent's ``CHANGELOG.md`` line, with ``pi/revertChanges`` (a ``workspace/applyEdit`` on the
   dirty buffer: the user's unsaved line stays) and print the result.
6. Print a unified diff (``difflib.unified_diff``) of the project, disk plus unsaved buffers,
   against the original sample: the agent's fix to ``slug.py``, the user's line, not the
   reverted one.

Exit status: 0 when the run ended with ``stopReason: "stop"``, the hunk was reverted without
conflict and the replay saw no divergence from the recording; 1 otherwise; 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

import pi_lsp
from pi_lsp.demo.change_log import change_set_lines, pick_hunk, revert_lines
from pi_lsp.demo.demo_log import DemoLog, LiveList, project_diff
from pi_lsp.demo.editor_language_server import pylsp_command
from pi_lsp.demo.fake_editor import FakeEditor

DEMO_DIR = Path(__file__).resolve().parent
SAMPLE = DEMO_DIR / "sample"
SESSION = DEMO_DIR / "session.jsonl"

PROMPT = (
    "The slugify tests fail: accents must be folded (é → e) and a slug must not start or end "
    "with '-'. Fix textkit/slug.py, add a line about it under Unreleased in CHANGELOG.md, and run "
    "the tests."
)
USER_TYPED = "\n- `shorten` breaks at word boundaries (draft, not saved yet)\n"
"""What the user typed into ``CHANGELOG.md`` without saving, appended after ``## Unreleased\\n``."""

APPROVAL_ANSWER = "Allow once"
"""What the fake user answers when pi-lsp asks to approve a tool call (design.md section 8)."""

REVERTED_FILE = "CHANGELOG.md"
"""The file whose agent hunk the demo takes back at the end (through the dirty editor buffer)."""

ACTIVE_TOOLS = ["read", "bash", "edit", "write", "grep", "find"]
DIAGNOSTICS = {"settleSeconds": 15, "quietSeconds": 0.3}
"""The diagnostics wait after an edit: an upper bound for a slow machine (it ends once pylsp's
report went quiet), so the recorded run always sees the error it reports."""
NO_PYLSP = (
    "pi-lsp demo: the demo's editor runs the Python language server pylsp, which is not installed.\n"
    "Install it with:  .venv/bin/pip install -e '.[demo]'   (or: pip install 'python-lsp-server[pyflakes]')"
)
RUN_TIMEOUT_SECONDS = 120.0


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``pi-lsp demo``; returns the exit status (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="pi-lsp demo",
        description="Run the bundled end-to-end demo: a recorded model fixes a sample project through a fake editor.",
    )
    parser.add_argument("--provider", choices=("openai", "anthropic"), default="openai",
                        help="the wire format: openai (chat completions, default) or anthropic (Messages API)")
    parser.add_argument("--base-url", help="a real endpoint instead of the replay (e.g. http://127.0.0.1:11434/v1)")
    parser.add_argument("--model", help="model id for --base-url")
    parser.add_argument("--api-key-env", help="NAME of the environment variable holding the API key for --base-url")
    parser.add_argument("--workdir", help="work in this folder (created; must be empty) and keep it afterwards")
    args = parser.parse_args(argv)
    problem = _workdir_problem(args.workdir) if args.workdir else None
    if problem is not None:
        print(f"pi-lsp demo: --workdir {args.workdir} {problem}", file=sys.stderr)
        return 2
    if args.provider == "anthropic" and args.model and not args.base_url:
        # the same defaults as the pi.provider "anthropic" setting: Anthropic's API and its usual key
        args.base_url = ANTHROPIC_BASE_URL
        args.api_key_env = args.api_key_env or "ANTHROPIC_API_KEY"
    if (args.model or args.api_key_env) and not args.base_url:
        print("pi-lsp demo: --model and --api-key-env need --base-url (or --provider anthropic)", file=sys.stderr)
        return 2
    if args.api_key_env and not os.environ.get(args.api_key_env):
        print(f"pi-lsp demo: the environment variable {args.api_key_env} (--api-key-env) is not set", file=sys.stderr)
        return 2
    if args.base_url and not args.model:
        print("pi-lsp demo: --base-url needs --model (the model id the endpoint serves)", file=sys.stderr)
        return 2
    if pylsp_command() is None:
        print(NO_PYLSP, file=sys.stderr)
        if not args.base_url:  # the recording expects the error pylsp reports
            return 2
        print("pi-lsp demo: continuing without it (no language server in the editor)", file=sys.stderr)
    return asyncio.run(_interruptible(args, sys.stdout))


ANTHROPIC_BASE_URL = "https://api.anthropic.com/v1"
"""Where ``--provider anthropic --model M`` goes without ``--base-url`` (as the settings default)."""

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE)
"""Ctrl-C, a terminal or process manager stopping it, or its reader gone (``| head``)."""


async def _interruptible(args: argparse.Namespace, out: TextIO) -> int:
    """:func:`_demo`, ended cleanly by :data:`STOP_SIGNALS`: the run is cancelled, the editor and
    the replay stopped, the temp folder removed; exit status 128 + the signal, no traceback."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    stopped: list[int] = []

    def stop(signum: int) -> None:
        if not stopped and task is not None:
            stopped.append(signum)
            logging.getLogger("pygls").disabled = True  # answers to cancelled requests: expected now
            task.cancel()

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop, signum)
    try:
        return await _demo(args, out)
    except asyncio.CancelledError:
        if not stopped:
            raise
        if stopped[0] != signal.SIGPIPE:
            print(f"pi-lsp demo: interrupted ({signal.Signals(stopped[0]).name})", file=sys.stderr)
        return 128 + stopped[0]
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)


def _workdir_problem(workdir: str) -> str | None:
    """Why ``workdir`` cannot hold the demo (it must be an empty folder or not exist), or ``None``."""
    path = Path(workdir)
    if not path.exists():
        return None
    if not path.is_dir():
        return "is not a folder"
    try:
        if any(path.iterdir()):
            return "is not empty"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    return None


def _child_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    package_root = str(Path(pi_lsp.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [package_root, env.get("PYTHONPATH")] if p)
    env.update(extra)
    return env


class _Replay:
    """``pi-lsp replay`` as a subprocess: its URL and what it logged to stderr."""

    def __init__(self) -> None:
        self.process: asyncio.subprocess.Process | None = None
        self.stderr: list[str] = []
        self._drain: asyncio.Task[None] | None = None

    async def start(self, session: Path, env: dict[str, str], api_format: str = "openai") -> str:
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "pi_lsp", "replay", "--session", str(session), "--port", "0",
            "--format", api_format,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env,
        )
        assert self.process.stdout is not None and self.process.stderr is not None
        self._drain = asyncio.create_task(self._read_stderr(self.process.stderr))
        line = await asyncio.wait_for(self.process.stdout.readline(), 15)
        url = line.decode("utf-8", "replace").strip()
        if not url.startswith("http"):
            await self.stop()
            raise RuntimeError("pi-lsp replay did not start: " + " | ".join(self.stderr[-5:]))
        return url

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self.stderr.append(line.decode("utf-8", "replace").rstrip("\n"))

    async def stop(self) -> None:
        process = self.process
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()  # the replay exits at end of stdin
        try:
            await asyncio.wait_for(process.wait(), 5)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
        if self._drain is not None:
            await asyncio.wait_for(self._drain, 5)


async def _review_and_revert(editor: FakeEditor, log: DemoLog, project: Path, session_id: str) -> bool:
    """Show the turn's change set (``pi/changes``), take back one hunk (``pi/revertChanges``):
    the agent's ``CHANGELOG.md`` line when there is one, else the first hunk still applied. The
    revert goes through the editor (the buffer is dirty: the user's unsaved line must stay).
    True when the hunk was reverted without conflict, or when there was no hunk to revert."""
    changes = await editor.request("pi/changes", {"sessionId": session_id})
    log.line("")
    for line in change_set_lines(changes, project):
        log.line(line)
    hunk = pick_hunk(changes, project, REVERTED_FILE) or next(
        (h for f in changes.get("files") or [] for h in f.get("hunks") or [] if h.get("status") == "applied"), None
    )
    if hunk is None:
        log.line("no hunk to revert")
        return True
    log.line(f"\nthe user takes back hunk {hunk['id']}: pi/revertChanges {{\"hunks\": [\"{hunk['id']}\"]}}")
    report = await editor.request("pi/revertChanges", {"sessionId": session_id, "hunks": [hunk["id"]]})
    for line in revert_lines(report, project):
        log.line(line)
    return hunk["id"] in (report.get("reverted") or []) and not report.get("conflicts")


async def _demo(args: argparse.Namespace, out: TextIO) -> int:
    started = time.monotonic()
    keep = bool(args.workdir)
    base = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="pi-lsp-demo-"))
    base.mkdir(parents=True, exist_ok=True)
    project = base / "textkit"
    shutil.copytree(SAMPLE, project, ignore=shutil.ignore_patterns("__pycache__"))
    env = _child_env({"PI_LSP_SESSIONS_DIR": str(base / "sessions")})
    log = DemoLog(out, project)
    log.approval_answer = APPROVAL_ANSWER
    log.line(f"pi-lsp demo: sample project copied to {project}")
    replay: _Replay | None = None
    editor: FakeEditor | None = None
    try:
        if args.base_url:
            settings: dict[str, Any] = {"provider": args.provider, "baseUrl": args.base_url, "model": args.model}
            if args.api_key_env:
                settings["apiKeyEnv"] = args.api_key_env
            log.line(f"model: {settings['model']} at {args.base_url} ({args.provider})")
        else:
            replay = _Replay()
            url = await replay.start(SESSION, env, args.provider)
            settings = {"provider": args.provider, "baseUrl": url, "model": "replay", "maxRetries": 0}
            log.line(f"model: pi-lsp replay of {SESSION.name} at {url} ({args.provider} format)")
        settings["diagnostics"] = DIAGNOSTICS
        language_server = pylsp_command()
        editor = FakeEditor(
            project, initialization_options={"pi": settings}, env=env, message_answer=APPROVAL_ANSWER,
            language_server=language_server,
        )
        editor.events = LiveList(log.event)
        editor.apply_edits = LiveList(log.apply_edit)
        editor.save_requests = LiveList(lambda params: log.save(params, editor))
        await editor.start()
        log.line("editor: FakeEditor (UTF-16, versioned edits, saves) started pi-lsp over stdio")
        editor.open("textkit/slug.py")
        if language_server is not None:
            await editor.wait_diagnostics("textkit/slug.py")
            log.line("editor: its language server pylsp checks the Python buffers and answers pi-lsp's "
                     "pi/diagnostics and pi/languageRequest")
        changelog = editor.open("CHANGELOG.md")
        editor.type("CHANGELOG.md", len(changelog.text), len(changelog.text), USER_TYPED)
        log.line("editor: opened textkit/slug.py and CHANGELOG.md; the user typed into CHANGELOG.md without saving:")
        log.line(f"        {USER_TYPED.strip()}")  # its leading newline is a blank line in the file
        await editor.request("pi/setActiveTools", {"names": ACTIVE_TOOLS})
        log.line(f"pi/setActiveTools: {', '.join(ACTIVE_TOOLS)}")
        log.line(f"\nuser: {PROMPT}\n")
        result = await asyncio.wait_for(editor.request("pi/prompt", {"text": PROMPT}), RUN_TIMEOUT_SECONDS)
        log.finish_text()
        stop_reason = result.get("stopReason") if isinstance(result, dict) else None
        log.line(f"\npi/prompt finished: stopReason {stop_reason}"
                 + (f", error: {result.get('errorMessage')}" if isinstance(result, dict) and result.get("errorMessage") else ""))
        session_id = result.get("sessionId") if isinstance(result, dict) else None
        reverted_ok = await _review_and_revert(editor, log, project, session_id) if session_id else False
        unsaved = {
            path: buffer.text
            for path in ("textkit/slug.py", "CHANGELOG.md")
            if (buffer := editor.buffer(path)).modified
        }
        log.line("\n" + project_diff(SAMPLE, project, unsaved))
        for path, text in unsaved.items():
            kept = USER_TYPED in text if path == "CHANGELOG.md" else True
            log.line(f"unsaved in the editor: {path}" + (" (the user's typing kept)" if kept else " (the user's typing LOST)"))
        ok = stop_reason == "stop" and reverted_ok
    finally:
        if editor is not None:
            await editor.stop()
        if replay is not None:
            await replay.stop()
        if not keep and sys.exc_info()[0] is not None:  # interrupted or failed: leave nothing behind
            shutil.rmtree(base, ignore_errors=True)
    if replay is not None:
        divergences = [line for line in replay.stderr if line.startswith("replay:")]
        for line in divergences:
            log.line(line)
        if divergences:
            ok = False
        else:
            log.line("replay: every request matched the recording")
    log.line(f"done in {time.monotonic() - started:.1f} s" + (f"; kept {base}" if keep else ""))
    if not keep:
        shutil.rmtree(base, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
