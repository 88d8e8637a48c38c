"""How the file tools turn a model's path string into an absolute path (pi-behaviour.md 1.2, 1.3).

Models write paths the way people do: with ``~``, an ``@`` copied from a CLI mention, a non-breaking
space pasted from a web page, a ``file://`` URL, or a macOS screenshot name typed with plain
spaces and apostrophes. :func:`resolve_to_cwd` applies Pi's rules (used by edit, write, grep, find,
ls); :func:`resolve_read_path` adds read's fallbacks for names that exist on disk in another
Unicode form. There is no sandboxing here: absolute paths and ``..`` escapes are allowed (the
policy layer decides about those).
"""

from __future__ import annotations

import functools
import os
import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote, urlsplit

from pi_lsp.agent.js_values import js_inspect_string
from pi_lsp.agent.tool import ToolError
from pi_lsp.tools.file_io.real_paths import existing_real_path

_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")
_NARROW_NO_BREAK_SPACE = "\u202f"
_AM_PM = re.compile(r" (AM|PM)\.", re.IGNORECASE)
_CURLY_APOSTROPHE = "\u2019"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a str from JSON holds pairs as one code point


class InvalidPathError(ToolError):
    """The path string cannot name a file (an invalid ``file://`` URL). The message is model-facing."""


class NulInPathError(InvalidPathError):
    """The resolved path holds a NUL byte; ``path`` is it. The message is Node's for ``fs`` calls."""

    def __init__(self, path: str) -> None:
        super().__init__(
            "The argument 'path' must be a string, Uint8Array, or URL without null bytes. "
            f"Received {js_inspect_string(path)}"
        )
        self.path = path


def expand_path(path: str) -> str:
    """Pi's ``expandPath``: the textual clean-ups before resolution, in the peer's order.

    1. One leading ``@`` is removed (models echo the CLI's ``@file`` mentions).
    2. U+00A0, U+2000..U+200A, U+202F, U+205F and U+3000 become a plain space.
    3. Exactly ``~`` is the home directory; ``~/rest`` is home joined with ``rest``. ``~draft.md``
       and ``~user/x`` are *not* expanded (they stay relative names).
    4. A ``file://`` URL becomes its filesystem path (see :func:`file_url_to_path`).

    Whitespace is never trimmed. Lone surrogates (``"\\ud800"`` in JSON) become U+FFFD, as Node
    turns every path string into UTF-8 that way. Raises :class:`InvalidPathError` for an invalid
    file URL.
    """
    text = _LONE_SURROGATE.sub("\ufffd", path)
    text = text[1:] if text.startswith("@") else text
    text = _UNICODE_SPACES.sub(" ", text)
    if text == "~":
        return str(Path.home())
    if text.startswith("~/"):
        return str(Path.home()) + text[1:]
    if text[:7].lower() == "file://":
        return file_url_to_path(text)
    return text


def file_url_to_path(url: str) -> str:
    """Convert a ``file:`` URL to a POSIX path, with Node's ``fileURLToPath`` rules.

    The host must be empty or ``localhost``; percent-escapes are decoded (``%20`` is a space), but
    an encoded ``/`` (``%2F``) is refused because it cannot be part of a file name. Query and
    fragment are dropped. Raises :class:`InvalidPathError` with Node's message otherwise
    (``File URL host must be "localhost" or empty on linux``).
    Plain paths never come here, so a file literally named ``a%2Fb`` keeps its name.
    """
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise InvalidPathError(f"Invalid URL: {url}") from exc
    if parts.scheme.lower() != "file":
        raise InvalidPathError("The URL must be of scheme file")
    if parts.netloc not in ("", "localhost"):
        raise InvalidPathError('File URL host must be "localhost" or empty on linux')
    if not parts.path.startswith("/"):
        raise InvalidPathError("File URL path must be absolute")
    if re.search("%2f", parts.path, re.IGNORECASE):
        raise InvalidPathError("File URL path must not include encoded / characters")
    return unquote(parts.path, errors="surrogateescape")


def _normalise(path: str) -> str:
    """Lexical normalisation like Node's ``path.resolve`` (``.``/``..``, doubled and trailing ``/``)."""
    text = os.path.normpath(path)
    if text.startswith("//"):  # POSIX normpath keeps a leading '//'; Node does not
        text = "/" + text.lstrip("/")
    return text


def resolve_to_cwd(path: str, cwd: Path) -> Path:
    """Resolve a model-supplied path to an absolute, normalised path (Pi's ``resolveToCwd``, 1.2).

    ``path`` is the raw string from the tool call; ``cwd`` the session's working directory
    (absolute). After :func:`expand_path`, an absolute path is normalised (``/a/./b/../c`` ->
    ``/a/c``) and a relative one is joined to ``cwd`` first. Symlinks are not resolved. An empty
    string names ``cwd`` itself (Node's ``path.resolve(cwd, "")``).

    Raises :class:`InvalidPathError` for an invalid ``file://`` URL, and with Node's words
    (``The argument 'path' must be a string, Uint8Array, or URL without null bytes. Received
    '/cwd/a\\x00b'``) for a path holding a NUL byte, which no file name can contain.
    """
    return path_of(resolve_to_cwd_text(path, cwd))


def resolve_to_cwd_text(path: str, cwd: str | os.PathLike[str]) -> str:
    """:func:`resolve_to_cwd` as a string (the same rules and errors; no ``Path`` is built, which
    costs more than the resolution of a cached path: issue 21)."""
    cwd_text = os.fspath(cwd)
    # every call resolves its path twice (the policy, then the tool): without "~" (the home
    # directory, which the environment may change) the text is a pure function of its inputs
    resolved = _resolved_text(path, cwd_text) if "~" not in path else _resolve_text(path, cwd_text)
    if "\x00" in resolved:
        raise NulInPathError(resolved)
    return resolved


def _resolve_text(path: str, cwd: str) -> str:
    expanded = expand_path(path)
    if os.path.isabs(expanded):
        return _normalise(expanded)
    return _normalise(os.path.join(cwd, expanded))


_resolved_text = functools.lru_cache(maxsize=512)(_resolve_text)


path_of = functools.lru_cache(maxsize=512)(Path)
"""``Path(text)``, the same object again for a text seen recently: a ``Path`` is immutable and
building one costs more than resolving a cached path (the policy and the tool each want the
``Path`` of the same text on every call; issue 21)."""


def _read_path_variants(resolved: str) -> list[str]:
    """read's fallbacks in Pi's order: AM/PM with U+202F, NFD, curly apostrophe, NFD + curly."""
    nfd = unicodedata.normalize("NFD", resolved)
    return [
        _AM_PM.sub(lambda m: _NARROW_NO_BREAK_SPACE + m.group(1) + ".", resolved),
        nfd,
        resolved.replace("'", _CURLY_APOSTROPHE),
        nfd.replace("'", _CURLY_APOSTROPHE),
    ]


def resolve_read_path(path: str, cwd: Path) -> Path:
    """:func:`resolve_to_cwd` plus read's fallbacks for names stored in another form (1.3).

    When the plain resolved path does not exist (``os.path.exists``: symlinks followed), these are
    tried in order and the first that exists is returned: every `` AM.``/`` PM.`` (any case) with
    its space turned into U+202F (macOS screenshot names); the NFD form of the whole path; every
    ``'`` turned into U+2019; NFD plus U+2019. If none exists the plain resolved path is returned,
    so the caller's access check fails with ``ENOENT`` naming the path the model gave.
    """
    return path_of(resolve_read_path_text(path, cwd))


def resolve_read_path_text(path: str, cwd: str | os.PathLike[str]) -> str:
    """:func:`resolve_read_path` as a string (the same rules and errors, no ``Path`` built)."""
    resolved = resolve_to_cwd_text(path, cwd)
    if os.path.exists(resolved):
        return resolved
    return read_path_variant(resolved)[0]


def read_path_variant(resolved: str) -> tuple[str, str | None]:
    """read's fallbacks (:func:`resolve_read_path`) for a ``resolved`` path (the output of
    :func:`resolve_to_cwd_text`) found not to exist, with the real path of the one found:
    ``(variant, real)`` for the first that exists (``real`` ``None`` when the kernel did not
    tell, :func:`~pi_lsp.tools.file_io.real_paths.existing_real_path`), else
    ``(resolved, None)``. For the approval policy, which judges a read by its real path and
    checks existence with the same look-up (issue 21)."""
    for variant in _read_path_variants(resolved):
        if variant != resolved:
            found, real = existing_real_path(variant)
            if found:
                return variant, real
    return resolved, None


def display_path(path: Path, cwd: Path) -> str:
    """A short label for ``path``: relative to ``cwd`` with ``/`` separators when inside it, else
    the absolute path. ``cwd`` itself is ``.``. Used in editor labels (``pi: write src/a.py``)."""
    absolute = Path(_normalise(os.fspath(path)))
    base = Path(_normalise(os.fspath(cwd)))
    try:
        rel = absolute.relative_to(base)
    except ValueError:
        return absolute.as_posix()
    text = rel.as_posix()
    return text if text else "."


def resolve_directory(path: str | None, cwd: Path) -> Path:
    """Resolve a directory argument (``None`` means ``cwd``) the way find and ls check it.

    Returns the absolute path (pi-behaviour.md 1.2). Raises :class:`ToolError` with the peer's
    words: ``Path not found: {abs}`` when it cannot be stat-ed (symlinks followed), ``Not a
    directory: {abs}`` when it is something else.
    """
    try:
        directory = resolve_to_cwd(path or ".", cwd)
    except NulInPathError as exc:  # Pi's existsSync answers false for it
        raise ToolError(f"Path not found: {exc.path}") from None
    try:
        is_directory = directory.is_dir()
        directory.stat()
    except (OSError, ValueError):
        raise ToolError(f"Path not found: {directory}") from None
    if not is_directory:
        raise ToolError(f"Not a directory: {directory}")
    return directory
