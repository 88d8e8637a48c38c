"""Comment syntax by language, and the instruction comment a user writes for the agent (issue 16).

An **instruction** is a comment alone on its line whose text starts with the marker ``pi:``
(case-insensitive), written in the file's own comment syntax::

    # pi: make slugify fold accents          (Python, shell, YAML, TOML, ...)
    // pi: return early when the list is empty  (C, Java, JavaScript, Go, Rust, ...)
    -- pi: use a prepared statement           (Lua, SQL, Haskell)
    ;; pi: ...                                (Lisps, INI)
    <!-- pi: ... -->                          (HTML, XML, Markdown)
    /* pi: ... */                             (CSS, C)

The syntax is chosen by the LSP ``languageId`` the editor sent with ``didOpen`` (Neovim sends its
filetype, eglot the mode's language name), else by the file's extension, else every syntax of the
table is tried (a file of an unknown language still gets its instruction recognised).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

MARKER = re.compile(r"pi:\s*", re.IGNORECASE)
"""What starts an instruction's text inside the comment."""


@dataclass(frozen=True)
class CommentSyntax:
    """How a language writes a comment on one line.

    Attributes:
        line: line-comment openers (``#``, ``//``); a run of the opener's first character
            (``##``, ``///``, ``;;;``) counts as the opener too.
        block: ``(open, close)`` pairs usable on one line (``<!--``, ``-->``).
    """

    line: tuple[str, ...] = ()
    block: tuple[tuple[str, str], ...] = ()


HASH = CommentSyntax(line=("#",))
SLASHES = CommentSyntax(line=("//",), block=(("/*", "*/"),))
DASHES = CommentSyntax(line=("--",))
SEMICOLON = CommentSyntax(line=(";",))
PERCENT = CommentSyntax(line=("%",))
MARKUP = CommentSyntax(block=(("<!--", "-->"),))
CSS = CommentSyntax(block=(("/*", "*/"),))

LANGUAGES: dict[str, CommentSyntax] = {
    **dict.fromkeys(
        ("python", "shellscript", "sh", "bash", "zsh", "fish", "ruby", "perl", "r", "yaml", "toml",
         "make", "makefile", "dockerfile", "cmake", "elixir", "nim", "julia", "powershell", "conf",
         "gitignore", "gitcommit", "nix", "tcl", "awk", "coffeescript", "crystal", "gdscript", "just"),
        HASH,
    ),
    **dict.fromkeys(
        ("c", "cpp", "objective-c", "objective-cpp", "objc", "cuda", "java", "javascript", "typescript",
         "javascriptreact", "typescriptreact", "go", "rust", "swift", "kotlin", "scala", "csharp", "cs",
         "dart", "php", "zig", "jsonc", "groovy", "proto", "glsl", "hlsl", "solidity", "d", "v", "odin",
         "verilog", "systemverilog", "scss", "less"),
        SLASHES,
    ),
    **dict.fromkeys(("lua", "sql", "haskell", "elm", "ada", "vhdl", "purescript", "agda", "idris"), DASHES),
    **dict.fromkeys(
        ("lisp", "commonlisp", "scheme", "racket", "clojure", "fennel", "emacs-lisp", "elisp", "ini",
         "dosini", "asm", "nasm"),
        SEMICOLON,
    ),
    **dict.fromkeys(("tex", "latex", "bibtex", "erlang", "matlab", "octave", "prolog"), PERCENT),
    **dict.fromkeys(("html", "xml", "markdown", "xhtml", "svg", "vue", "svelte", "astro"), MARKUP),
    "css": CSS,
    "vim": CommentSyntax(line=('"',)),
    "ocaml": CommentSyntax(block=(("(*", "*)"),)),
    "fsharp": CommentSyntax(line=("//",), block=(("(*", "*)"),)),
    "vb": CommentSyntax(line=("'",)),
}
"""Comment syntax by LSP ``languageId`` (the spec's identifiers plus common editor filetypes)."""

EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".sh": "sh", ".bash": "bash", ".zsh": "zsh", ".fish": "fish",
    ".rb": "ruby", ".pl": "perl", ".pm": "perl", ".r": "r", ".yaml": "yaml", ".yml": "yaml",
    ".toml": "toml", ".mk": "make", ".cmake": "cmake", ".ex": "elixir", ".exs": "elixir",
    ".nim": "nim", ".jl": "julia", ".ps1": "powershell", ".conf": "conf", ".cfg": "conf", ".nix": "nix",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".m": "objective-c", ".cu": "cuda", ".java": "java", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".jsx": "javascriptreact", ".tsx": "typescriptreact", ".go": "go", ".rs": "rust", ".swift": "swift",
    ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".cs": "csharp", ".dart": "dart", ".php": "php",
    ".zig": "zig", ".jsonc": "jsonc", ".groovy": "groovy", ".gradle": "groovy", ".proto": "proto",
    ".sol": "solidity", ".scss": "scss", ".less": "less", ".lua": "lua", ".sql": "sql", ".hs": "haskell",
    ".elm": "elm", ".adb": "ada", ".ads": "ada", ".lisp": "lisp", ".cl": "lisp", ".scm": "scheme",
    ".rkt": "racket", ".clj": "clojure", ".cljs": "clojure", ".fnl": "fennel", ".el": "emacs-lisp",
    ".ini": "ini", ".asm": "asm", ".tex": "tex", ".bib": "bibtex", ".erl": "erlang", ".html": "html",
    ".htm": "html", ".xml": "xml", ".md": "markdown", ".markdown": "markdown", ".svg": "svg",
    ".vue": "vue", ".svelte": "svelte", ".css": "css", ".vim": "vim", ".ml": "ocaml", ".mli": "ocaml",
    ".fs": "fsharp", ".fsx": "fsharp", ".vb": "vb",
}
"""``languageId`` by file extension (lower case), for clients that send no useful ``languageId``."""

FILE_NAMES: dict[str, str] = {
    "makefile": "make", "gnumakefile": "make", "dockerfile": "dockerfile", "cmakelists.txt": "cmake",
    ".gitignore": "gitignore", "justfile": "just", ".vimrc": "vim",
}

GENERIC_LANGUAGE_IDS = frozenset({"plaintext", "text", "txt"})
"""``languageId`` values that say nothing about the language (the file name decides then)."""

ANY = CommentSyntax(
    line=("#", "//", "--", ";", "%", '"'),
    block=(("<!--", "-->"), ("/*", "*/"), ("(*", "*)")),
)
"""Tried when neither the ``languageId`` nor the file name is known."""


def language_of(language_id: str | None, path: str | None) -> str:
    """The document's language: ``language_id`` when the client sent a specific one, else the one
    its file name or extension implies (``path``: a filesystem path or URI), else ``""``."""
    if language_id and language_id.lower() not in GENERIC_LANGUAGE_IDS:
        return language_id
    if path:
        name = PurePosixPath(path).name.lower()
        return FILE_NAMES.get(name) or EXTENSIONS.get(PurePosixPath(name).suffix) or ""
    return ""


def syntax_for(language_id: str | None, path: str | None) -> CommentSyntax:
    """The comment syntax of a document: by ``language_id`` (case-insensitive), else by the file
    name or extension of ``path`` (a filesystem path or URI path), else :data:`ANY`."""
    for language in (language_id, language_of(None, path)):
        if language and (syntax := LANGUAGES.get(language.lower())):
            return syntax
    return ANY


def instruction_of(line: str, syntax: CommentSyntax) -> str | None:
    """The instruction written on ``line`` (one line, without its line break), or ``None``.

    The line must hold only a comment (leading and trailing whitespace allowed) whose text starts
    with ``pi:``; the instruction is the rest of the text, stripped, and must not be empty.
    ``# pi: make slugify fold accents`` gives ``"make slugify fold accents"``.
    """
    text = line.strip()
    for opener, closer in syntax.block:
        if text.startswith(opener) and text.endswith(closer) and len(text) >= len(opener) + len(closer):
            found = _marked(text[len(opener):len(text) - len(closer)])
            if found:
                return found
    for opener in syntax.line:
        if text.startswith(opener):
            rest = text[len(opener):].lstrip(opener[0])
            found = _marked(rest)
            if found:
                return found
    return None


def _marked(comment: str) -> str | None:
    match = MARKER.match(comment.strip())
    if match is None:
        return None
    instruction = comment.strip()[match.end():].strip()
    return instruction or None
