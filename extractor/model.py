"""Records the extractor produces: raise sites, their source context, and per-file results.

Every position is 1-based (line and column), columns count characters, not bytes, so they can be
shown to people as `path:line:col:` unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SourceContext:
    """The source shown next to a raise site on its docs page."""

    start_line: int
    """1-based line of the file where `code` starts."""
    code: str
    """The lines shown, joined with `\\n`, without a trailing newline."""
    highlight_line: int
    """1-based line of the file (not of `code`) that holds the `raise` keyword."""


@dataclass(frozen=True)
class Condition:
    """One level of what leads to a raise, read from the code that encloses it.

    `kind` says what `code` is:

    - `if`: an expression that holds when the raise runs: the test of an enclosing `if` or
      `elif`, with the tests of earlier branches negated when the raise is in a later branch;
    - `guard`: an expression that holds because an earlier `if` of the same block exits
      (`return`, `raise`, `continue`, `break`) when it does not;
    - `for`: the iterable of an enclosing `for` loop (`subject`: its target);
    - `while`: the test of an enclosing `while` loop;
    - `for_else`, `while_else`: the same, for a raise in the loop's `else` (no `break` happened);
    - `except`, `except_group`: the class expression of the enclosing `except` (or `except*`)
      handler, None for a bare `except:` (`subject`: the name after `as`, or None);
    - `try_else`: the `try` body raised nothing (`code` is None);
    - `finally`: the raise is in a `finally` block (`code` is None);
    - `case`: the pattern of the enclosing `case`, with its guard (`subject`: the `match` subject).
    """

    kind: str
    """One of the kinds above."""
    code: str | None
    """Source as written (negations and `elif` chains rebuilt from the parts as written)."""
    line: int
    """1-based line of the statement (`if`, `for`, `except`, ...) the condition comes from."""
    subject: str | None = None
    """The loop target, the handler's name or the match subject as written, where there is one."""
    locals: tuple[str, ...] = ()
    """For `if` and `guard`: the names its tests read that the raise's function binds itself
    (assigns, loops over, ...), its parameters only where it binds them again (`lr =
    float(lr)`), sorted. A test reading none of them depends only on what the caller passed
    and on names from outside the function."""
    expanded: str | None = None
    """For an `if` or `guard` reading `locals`: the test with each of them replaced by the value of its
    only assignment, where that assignment runs before the `if` on the way to the raise and no
    statement between them names it (`conditions.py`), so that it reads only parameters and
    names from outside the function; a loop's item makes it `any(<test> for <item> in
    <iterable>)`; None when some local cannot be replaced so."""
    depends: tuple[str, ...] = ()
    """For an `if` reading `locals` with no `expanded` form: the function's parameters those
    locals are computed from by any of their bindings (a superset, any path), sorted."""
    instance: tuple[tuple[str, str, str, int], ...] = ()
    """For an `if` in a method: the attributes of the instance its test reads that the
    class's `__init__` sets from one of its parameters and nothing else in the class changes
    (`extractor.instance`): (attribute, the constructor's parameter, what the class's or its
    `__init__`'s docstring says of that parameter or "", that entry's file line or 0),
    sorted."""
    returns: bool = False
    """For a `guard`: every branch of the earlier `if` that exits leaves the function by
    `return` (no raise, no loop's `continue` or `break`), so a call for which the guard does not
    hold returns there, normally, instead of reaching the raise (`if activation == "relu":
    return F.relu` ahead of a raise at the end)."""


@dataclass(frozen=True)
class Documented:
    """What a docstring says about raising a site's exception: one entry of its raises section."""

    text: str
    """The entry's description, its lines joined by single spaces (reST roles as code spans)."""
    line: int
    """1-based line of the file where the entry starts (the line naming the exception)."""
    function: str
    """The dotted function (or, for a raise in `__init__`, class) whose docstring it is."""


@dataclass(frozen=True)
class RaiseSite:
    """One `raise` statement and what it says."""

    path: str
    """The file, relative to the current directory when scanned, `/`-separated."""
    line: int
    """1-based line of the `raise` keyword."""
    column: int
    """1-based column (in characters) of the `raise` keyword."""
    end_line: int
    """1-based line where the raise statement ends."""
    end_column: int
    """1-based column (in characters) just past the end of the raise statement."""
    exception: str | None
    """The raised name as written (`ValueError`, `errors.Foo`); None for other expressions."""
    qualified_name: str | None
    """`exception` resolved through the module's imports (`builtins.ValueError`), or None."""
    template: str | None
    """The message as written, literal braces doubled, fields as `{<source>}`; None if unknown."""
    function: str | None
    """Dotted enclosing classes and functions (`Pool.take`); None at module level."""
    reraise: bool
    """True for a bare `raise`, and for `raise err` inside `except ... as err` where nothing
    else binds `err`: both raise again the exception being handled. Also for `raise last`
    where every binding of `last` is None or a caught exception (`last = err` in its
    handler), for `raise value` inside `if isinstance(value, Exception):` where the scope
    builds nothing into `value`, for `raise err.with_traceback(tb)` and `raise err.attribute`
    of a caught `err`, and for an item of a list the scope fills with caught exceptions only
    (`raise errors[0]`): an exception raised before, raised again (`typing.cast(T, value)`
    reads as `value`)."""
    cause: str | None
    """Source of the expression after `from`, or None."""
    ignored: str | None
    """The reason of an `# errcat: ignore[reason]` comment on the raise, or None."""
    keywords: tuple[tuple[str, str], ...] = ()
    """Keyword arguments of the raised call: (name, value source) in call order; an unpacked
    mapping (`**options`) is (`**`, its source)."""
    arguments: tuple[str, ...] | None = None
    """Source of each positional argument of the raised call as written (`*args` keeps its
    star); None when the raise is not a call (`raise X`, a bare `raise`)."""
    via: str | None = None
    """For `raise err` where `err` has a single assignment before the raise in the raise's
    scope (`err = X(...)`), or one such call beside bindings that hold None or a caught
    exception (`err = caught` in handlers), the name `err`: the site's exception, template and
    arguments are then those of that call. None for every other raise. Not part of `errcat
    scan --json`."""
    context: SourceContext | None = None
    """The surrounding source for docs pages."""
    conditions: tuple[Condition, ...] = ()
    """What leads to the raise within its function (or module, or class body), innermost
    first; empty when nothing encloses it. Not part of `errcat scan --json`."""
    signature: str | None = None
    """The enclosing function's decorators and header as written, up to its colon; None when
    the innermost scope is a module or a class body. Not part of `errcat scan --json`."""
    documented: tuple[Documented, ...] = ()
    """The entries of the innermost enclosing function's docstring (and, in `__init__`, of its
    class's) whose exception's last dotted component is that of `exception` or of
    `qualified_name`; function first, then class, each in line order. Not part of
    `errcat scan --json`."""
    entry: str | None = None
    """The catalog id; the extractor never sets it (the scan command does, via the catalog)."""
    printed: str | None = None
    """What `str(exc)` prints, as a template, where a call or a class of the package builds
    the text (`extractor.printed`): through a factory or raise helper, over the call's
    arguments; through a class's `__init__`/`__str__`, over its constructor's parameters. None
    where the message is `template` as written. Not part of `errcat scan --json`."""
    through: str | None = None
    """The qualified name of the factory or helper function the raised exception comes from
    (`packaging.metadata._Validator._invalid_metadata`), or of the function whose returned
    text is its message (`raise RuntimeError(_mismatch_msg(...))`), or of the raising function
    itself where its message is a parameter's default text (`msg="Expected size {}"`, then
    `raise RuntimeError(msg.format(...))`), which callers may replace, or where its message is
    a local it extends under conditions after its last plain step (`printed` is then the
    text every such message starts with); None for a raise of a class as written. Not part of `errcat scan --json`."""
    unresolved: str | None = None
    """Why the printed text cannot be read through the factory or class, and what to do; None
    when it can (or nothing was to be read). Not part of `errcat scan --json`."""
    call: bool = False
    """True for a call statement of a raise helper (`self.fail("unexpected end")`, a function
    that ends by raising an exception built from its parameters), read as a site of that
    exception with the text this call gives it (`extractor.printed`): `line` and `column` are
    the call's, `through` names the helper. Such sites are added by the reading, never by the
    scan, and are not part of `errcat scan --json`."""

    def as_dict(self) -> dict[str, Any]:
        """The site as `errcat scan --json` writes it (contract keys, in contract order)."""
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "exception": self.exception,
            "qualified_name": self.qualified_name,
            "template": self.template,
            "function": self.function,
            "reraise": self.reraise,
            "cause": self.cause,
            "ignored": self.ignored,
            "entry": self.entry,
        }


@dataclass(frozen=True)
class ScanFailure:
    """A file (or folder) that could not be scanned, with the reason."""

    path: str
    """The file, relative to the current directory when scanned, `/`-separated."""
    line: int
    """1-based line of the problem; 1 when it concerns the whole file."""
    column: int
    """1-based column of the problem; 1 when it concerns the whole file."""
    message: str
    """One line saying what is wrong."""

    def as_dict(self) -> dict[str, Any]:
        """The failure as `errcat scan --json` writes it."""
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "message": self.message,
        }

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.message}"


@dataclass(frozen=True)
class FileResult:
    """The outcome of scanning one file: its sites, or the failure that stopped it."""

    path: str
    """The file, relative to the current directory when scanned, `/`-separated."""
    sites: tuple[RaiseSite, ...] = ()
    """Raise sites in source order; empty when the file failed."""
    failure: ScanFailure | None = None
    """Why the file could not be scanned, or None when it was."""

    @property
    def ok(self) -> bool:
        """Whether the file was scanned."""
        return self.failure is None


@dataclass(frozen=True)
class ScanReport:
    """The outcome of a whole scan, in path order."""

    results: tuple[FileResult, ...]
    """One result per file (or unreadable folder), sorted by path."""
    cache_hits: int = 0
    """Files whose result came from the cache."""
    cache_misses: int = 0
    """Files that were parsed."""
    jobs: int = 1
    """Processes that did the parsing (1: in this process)."""

    @property
    def sites(self) -> list[RaiseSite]:
        """All raise sites, by path then position."""
        return [site for result in self.results for site in result.sites]

    @property
    def failures(self) -> list[ScanFailure]:
        """All failures, by path."""
        return [result.failure for result in self.results if result.failure is not None]

    def as_dict(self) -> dict[str, Any]:
        """The report as `errcat scan --json` writes it."""
        return {
            "files": len(self.results),
            "sites": [site.as_dict() for site in self.sites],
            "failures": [failure.as_dict() for failure in self.failures],
        }
