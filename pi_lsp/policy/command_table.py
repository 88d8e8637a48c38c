"""The commands bash may run without asking, each with the allowlist of its options (issue 13).

Every option listed here was checked against the command's manual: it neither writes, nor runs
another program, nor reads a file other than the ones its value names (see
:data:`pi_lsp.policy.command_args.ValueKind` for the kinds). What is **not** listed is asked
about, notably: ``find -delete/-exec/-ok/-fprint/-fls/-files0-from/-L``, ``sort -o/-T/
--compress-program/--files0-from``, ``wc``/``du --files0-from``, ``file -f/-m/-C/-z``, ``grep
-R/-d/-D/--exclude-from``, ``rg --pre/--pre-glob/-z/-L/--hostname-bin``, ``tail -f``, ``tree
-o/-l``, ``git`` global options (``-c``, ``--git-dir``, ...), ``git diff/show/grep/blame`` and
``git log -p/-S/-G/-L`` (they print file contents from history: asked), ``git log --stat``
(diff statistics run the text-conversion programs ``.gitattributes`` select), ``git branch NAME``
(creates a branch).
"""

from __future__ import annotations

from dataclasses import replace

from pi_lsp.policy.command_args import ArgsRefused, CommandSpec, ParsedArgs, spec


def _no_operands(parsed: ParsedArgs) -> None:
    operands = [text for kind, text, shown in parsed.values if shown == "operand"]
    if operands:
        raise ArgsRefused(f"operands ({operands[0]!r}) are not judged for this command")


def _git_log_check(parsed: ParsedArgs) -> None:
    for kind, text, shown in parsed.values:
        if shown in ("--format", "--pretty") and "%G" in text:
            raise ArgsRefused("`git log` signature placeholders (`%G...`) run gpg")


def _git_branch_check(parsed: ParsedArgs) -> None:
    if "list" not in parsed.modes:
        _no_operands(parsed)


_GREP = spec(
    "grep",
    short="i y v w x c l L n h H o q s b r!recursive I a z Z T U E F G P A:number B:number C:number"
    " m:number e:text!pattern-given f:read!pattern-given",
    long="ignore-case no-ignore-case invert-match word-regexp line-regexp count files-with-matches"
    " files-without-match line-number no-filename with-filename only-matching quiet silent byte-offset"
    " recursive!recursive binary-files=text text null null-data initial-tab extended-regexp fixed-strings"
    " basic-regexp perl-regexp after-context=number before-context=number context=number max-count=number"
    " regexp=text!pattern-given file=read!pattern-given include=text exclude=text exclude-dir=text"
    " color?=text colour?=text label=text line-buffered no-messages",
    operands="read", pattern_first=True, recursive_operands="tree", default_operand=".",
)

_HEAD_TAIL = dict(
    short="n:number c:number q v z",
    long="lines=number bytes=number quiet silent verbose zero-terminated",
    numeric_shorthand=True,
)

_GIT: dict[str, CommandSpec] = {
    "status": spec(
        "git status",
        short="s b z",
        long="short branch porcelain?=text long untracked-files?=text ignored?=text show-stash"
        " ahead-behind no-ahead-behind null column?=text no-column renames no-renames",
        operands="text",
    ),
    "log": spec(
        "git log",
        short="n:number",
        long="oneline max-count=number skip=number graph decorate?=text no-decorate all branches?=text"
        " tags?=text remotes?=text format=text pretty?=text abbrev-commit no-abbrev-commit"
        " name-only name-status author=text committer=text grep=text since=text until=text"
        " after=text before=text reverse no-merges merges first-parent date=text relative-date"
        " topo-order date-order author-date-order color?=text no-color left-right cherry-pick boundary"
        " ancestry-path simplify-by-decoration",
        operands="text", numeric_shorthand=True, check=_git_log_check,
    ),
    "ls-files": spec(
        "git ls-files",
        short="c d m o i s k u z t v x:text X:read",
        long="cached deleted modified others ignored stage killed unmerged directory no-empty-directory"
        " exclude-standard exclude=text exclude-per-directory=text full-name error-unmatch abbrev?=number"
        " eol deduplicate",
        operands="text",
    ),
    "rev-parse": spec(
        "git rev-parse",
        short="q",
        long="show-toplevel git-dir git-common-dir absolute-git-dir is-inside-work-tree is-inside-git-dir"
        " is-bare-repository abbrev-ref?=text short?=number verify quiet symbolic symbolic-full-name"
        " show-prefix show-cdup",
        operands="text",
    ),
    "branch": spec(
        "git branch",
        short="a r v l!list",
        long="all remotes verbose list!list show-current no-color color?=text sort=text merged?=text"
        " no-merged?=text contains?=text no-contains?=text points-at=text format=text column?=text",
        operands="text", check=_git_branch_check,
    ),
}
"""The git subcommands allowed without asking (they print names, ids and commit metadata only)."""

_FIND_FLAGS = frozenset(
    "-print -print0 -prune -empty -true -false -not -a -and -o -or ( ) ! , -readable -writable"
    " -executable -depth -xdev -mount -nowarn -warn -daystart -ls -nouser -nogroup".split()
)
_FIND_TEXT = frozenset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -user -group -perm"
    " -regextype -lname -ilname -printf".split()
)
_FIND_NUMBER = frozenset(
    "-maxdepth -mindepth -mtime -mmin -atime -amin -ctime -cmin -size -links -inum -uid -gid -used".split()
)
_FIND_NAME = frozenset("-newer -anewer -cnewer -samefile".split())

READ_ONLY_COMMANDS: dict[str, CommandSpec] = {
    entry.name: entry
    for entry in (
        spec("ls",
             short="a A l h t r S 1 d F R i s n g o G c u U X v p Q N m x C I:text w:number T:number",
             long="all almost-all human-readable si color?=text sort=text time-style=text classify?=text"
             " group-directories-first directory recursive reverse size inode numeric-uid-gid full-time"
             " indicator-style=text ignore=text hide=text format=text time=text width=number"
             " quoting-style=text literal escape file-type no-group",
             operands="name"),
        spec("pwd", short="L P", operands="text", check=_no_operands),
        spec("echo", short="n e E", operands="text", options_stop_at_operand=True),
        spec("whoami", operands="text", check=_no_operands),
        spec("uname", short="a s n r v m p i o", operands="text", check=_no_operands),
        spec("which", short="a", operands="text"),
        spec("cat", short="A b e E n s t T u v",
             long="show-all number-nonblank number squeeze-blank show-ends show-tabs show-nonprinting"),
        spec("head", **_HEAD_TAIL),  # type: ignore[arg-type]
        spec("tail", **_HEAD_TAIL),  # type: ignore[arg-type]
        spec("wc", short="c l w m L", long="bytes lines words chars max-line-length total=text"),
        spec("stat", short="L f t c:text", long="dereference file-system terse format=text printf=text",
             operands="name"),
        spec("du", short="a b c h k m s x d:number",
             long="all apparent-size total human-readable summarize max-depth=number si bytes"
             " block-size=text exclude=text one-file-system",
             operands="name"),
        spec("file", short="b i k L h", long="brief mime mime-type mime-encoding keep-going dereference"
             " no-dereference"),
        spec("basename", short="a s:text z", long="multiple suffix=text zero", operands="text"),
        spec("dirname", short="z", long="zero", operands="text"),
        spec("realpath", short="e m s q z L P",
             long="canonicalize-existing canonicalize-missing no-symlinks strip quiet zero logical physical"
             " relative-to=name relative-base=name",
             operands="name"),
        spec("readlink", short="f e m n q s v z", long="canonicalize canonicalize-existing canonicalize-missing"
             " no-newline quiet silent verbose zero", operands="name"),
        spec("diff", short="u U:number c C:number q s i w b B E Z a t T y W:number N r!recursive p",
             long="unified?=number context?=number brief report-identical-files ignore-case ignore-all-space"
             " ignore-space-change ignore-blank-lines text expand-tabs initial-tab side-by-side width=number"
             " new-file recursive!recursive color?=text label=text show-c-function minimal"
             " strip-trailing-cr suppress-common-lines from-file=tree to-file=tree",
             operands="tree"),  # `diff f DIR` reads DIR/f: a directory operand is walked
        spec("cmp", short="b l s i:text n:number",
             long="print-bytes verbose quiet silent ignore-initial=text bytes=number"),
        spec("sort", short="b d f g i M h n R r V s u z c C k:text t:text S:number o:write T:write",
             long="ignore-leading-blanks dictionary-order ignore-case general-numeric-sort ignore-nonprinting"
             " month-sort human-numeric-sort numeric-sort random-sort reverse version-sort stable unique"
             " zero-terminated check?=text sort=text key=text field-separator=text buffer-size=number"
             " parallel=number random-source=read output=write temporary-directory=write"
             " compress-program=runs"),
        spec("tree", short="a d f i s h D F p u g C n L:number P:text I:text o:write",
             long="noreport dirsfirst charset=text", operands="name"),
        _GREP,
        replace(_GREP, name="egrep"),
        replace(_GREP, name="fgrep"),
        spec("rg",
             short="i s S F w x v n N l c o q 0 H I u!hidden .!hidden A:number B:number C:number m:number"
             " e:text!pattern-given f:read!pattern-given g:text t:text T:text j:number M:number d:number"
             " r:text",
             long="hidden!hidden no-hidden no-ignore no-ignore-vcs no-ignore-dot no-ignore-parent ignore-case"
             " smart-case case-sensitive fixed-strings word-regexp line-regexp invert-match line-number"
             " no-line-number files-with-matches files-without-match count count-matches only-matching quiet"
             " null with-filename no-filename no-heading heading color=text colors=text json vimgrep column"
             " no-column byte-offset trim glob=text iglob=text type=text type-not=text max-count=number"
             " max-depth=number max-filesize=text after-context=number before-context=number"
             " context=number regexp=text!pattern-given file=read!pattern-given files!pattern-given"
             " sort=text sortr=text multiline multiline-dotall pcre2 text binary max-columns=number"
             " max-columns-preview passthru stats threads=number unrestricted!hidden type-list!pattern-given"
             " replace=text no-messages no-config pretty pre=runs pre-glob=text",
             operands="tree", pattern_first=True, default_operand="."),
    )
}
"""The simple read-only commands (``find`` and ``git`` have their own grammars, below)."""

GIT_SUBCOMMANDS: dict[str, CommandSpec] = _GIT


def find_values(args: list[str]) -> ParsedArgs:
    """Read ``find``'s argument vector: start points (``name``; ``.`` when none), then an
    expression of the primaries allowed (:data:`_FIND_FLAGS`, text-valued, number-valued and
    path-valued ones). Raises :class:`ArgsRefused` for any other word starting with ``-``."""
    parsed = ParsedArgs()
    i = 0
    starts: list[str] = []
    while i < len(args) and not (args[i].startswith("-") or args[i] in ("(", ")", "!", ",")):
        starts.append(args[i])
        i += 1
    for start in starts or ["."]:
        parsed.values.append(("name", start, "operand"))
    while i < len(args):
        word = args[i]
        i += 1
        if word in _FIND_FLAGS:
            parsed.options.append(word)
            continue
        if word in _FIND_TEXT or word in _FIND_NUMBER or word in _FIND_NAME:
            if i >= len(args):
                raise ArgsRefused(f"`find {word}` is missing its value")
            value = args[i]
            i += 1
            parsed.options.append(word)
            if word in _FIND_NAME:
                parsed.values.append(("name", value, word))
            continue
        raise ArgsRefused(f"`find {word}` is not a primary known to be safe")
    return parsed
