"""`extractor.printed`: what a raise prints where the package builds the exception or its text
elsewhere (factories, raise helpers, composing classes, message tables), read across files,
and why where it cannot be read."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import read_sites

from extractor import RaiseSite, scan_paths
from extractor.printed import read_printed
from extractor.printed_cache import read_printed_cached


def _sites(tmp_path: Path, files: dict[str, str]) -> dict[int, RaiseSite]:
    """The read sites of `pkg/main.py` by line."""
    return read_sites(tmp_path, files)


def test_a_function_factory_gives_its_class_and_the_text_it_builds(tmp_path: Path) -> None:
    """`raise make_exc(x)` is a site of the class the factory returns, printing what it builds
    from the call's arguments; the scan's own fields stay the message as written."""
    sites = _sites(
        tmp_path,
        {
            "pkg/errors.py": """
                def make_exc(name, kind="field"):
                    message = f"no such {kind}: {name}"
                    return ValueError(message)
                """,
            "pkg/main.py": """
                from pkg.errors import make_exc

                def get(name):
                    raise make_exc(name)

                def get_column(col):
                    raise make_exc(col, kind="column")
                """,
        },
    )
    first, second = sites[4], sites[7]
    assert (first.exception, first.template) == ("make_exc", None)
    assert first.qualified_name == "builtins.ValueError"
    assert first.through == "pkg.errors.make_exc"
    assert first.printed == "no such field: {name}"
    assert second.printed == "no such column: {name}"
    assert first.as_dict()["qualified_name"] == "builtins.ValueError"


def test_a_method_factory_of_a_base_with_format_map(tmp_path: Path) -> None:
    """`raise self._invalid(...)` finds the method on a base class in another module, and a
    `msg.format_map({"field": ...})` there fills the `{field}` of the call's literal text."""
    sites = _sites(
        tmp_path,
        {
            "pkg/base.py": """
                class Invalid(ValueError):
                    def __init__(self, field, message):
                        self.field = field
                        super().__init__(message)

                class Validator:
                    def _invalid(self, msg, cause=None):
                        exc = Invalid(self.name, msg.format_map({"field": repr(self.name)}))
                        exc.__cause__ = cause
                        return exc
                """,
            "pkg/main.py": """
                from pkg.base import Validator

                class Names(Validator):
                    def check(self, value):
                        if not value:
                            raise self._invalid("{field} is a required field")
                        raise self._invalid(f"{value!r} is invalid for {{field}}")
                """,
        },
    )
    assert sites[6].qualified_name == "pkg.base.Invalid"
    assert sites[6].printed == "{repr(self.name)} is a required field"
    assert sites[7].printed == "{value!r} is invalid for {repr(self.name)}"
    assert sites[6].through == "pkg.base.Validator._invalid"


def test_a_raise_helper_and_gettext(tmp_path: Path) -> None:
    """A helper that raises the exception itself reads like a factory; `_()` of a literal is
    the literal, in the helper's call as in a plain raise."""
    sites = _sites(
        tmp_path,
        {
            "pkg/main.py": """
                from gettext import gettext as _

                class BadParameter(ValueError):
                    pass

                class Option:
                    def fail(self, message):
                        raise BadParameter(message)

                    def check(self, x):
                        if x < 0:
                            raise self.fail(_("x must be positive"))
                        raise ValueError(_("x is too large"))
                """,
        },
    )
    assert sites[12].qualified_name == "pkg.main.BadParameter"
    assert sites[12].printed == "x must be positive"
    assert sites[13].template == "x is too large"
    # The helper's own raise: a class composing nothing prints its argument as written.
    assert (sites[8].printed, sites[8].arguments) == (None, ("message",))


def test_a_composing_init_through_super_gives_one_template(tmp_path: Path) -> None:
    """`KeyAlreadyPresent(k)` and a subclass's `(key, table)` print the text `__init__`
    composes, placeholders named after the constructor's parameters, whatever the names the
    raises pass; a literal argument is spliced in; the scan template stays as written."""
    sites = _sites(
        tmp_path,
        {
            "pkg/errors.py": """
                class KeyAlreadyPresent(Exception):
                    def __init__(self, key):
                        super().__init__(f'Key "{key}" already exists.')

                class Nested(KeyAlreadyPresent):
                    def __init__(self, key, table):
                        self.table = table
                        KeyAlreadyPresent.__init__(self, key)
                """,
            "pkg/main.py": """
                from pkg.errors import KeyAlreadyPresent, Nested

                def add(k):
                    raise KeyAlreadyPresent(k)

                def put(key, table):
                    raise Nested(key, table)

                def fixed():
                    raise KeyAlreadyPresent("a")
                """,
        },
    )
    assert sites[4].arguments == ("k",)
    assert sites[4].printed == 'Key "{key}" already exists.'
    assert sites[7].printed == 'Key "{key}" already exists.'
    assert sites[10].printed == 'Key "a" already exists.'


def test_a_composing_init_reads_its_literal_locals_and_str_of_its_arguments(
    tmp_path: Path,
) -> None:
    """A constructor's local bound once to literal text is that text in what it composes, and
    `str()` of its argument prints the argument's text; a local bound to anything else, or
    bound twice, stays a placeholder."""
    sites = _sites(
        tmp_path,
        {
            "pkg/main.py": """
                class MinifierError(Exception):
                    def __init__(self, original):
                        extra = "This is a bug in the minifier, please report it"
                        full = f"{extra}: {str(original)}"
                        super().__init__(full)

                class Unsupported(Exception):
                    def __init__(self, node, strict=False):
                        name = type(node).__name__
                        kind = "construct"
                        if strict:
                            kind = "strict construct"
                        super().__init__(f"{name} is not a supported {kind}")

                def dump(a, b):
                    if a is None and b is None:
                        raise MinifierError("One of a and b must be given")
                    raise MinifierError(b)

                def visit(node):
                    raise Unsupported(node)
                """,
        },
    )
    assert sites[17].printed == (
        "This is a bug in the minifier, please report it: One of a and b must be given"
    )
    assert sites[18].printed == "This is a bug in the minifier, please report it: {original}"
    assert sites[21].printed == "{name} is not a supported {kind}"


def test_str_over_attributes_set_along_the_init_chain(tmp_path: Path) -> None:
    """`__str__` reading `self.message` that the base's `__init__` sets prints the argument;
    a `__str__` with several returns leaves the message as the constructor was given it."""
    sites = _sites(
        tmp_path,
        {
            "pkg/errors.py": """
                class BadData(Exception):
                    def __init__(self, message):
                        super().__init__(message)
                        self.message = message

                    def __str__(self):
                        return str(self.message)

                class BadSignature(BadData):
                    def __init__(self, message, payload=None):
                        super().__init__(message)
                        self.payload = payload

                class Located(Exception):
                    def __init__(self, message, line):
                        super().__init__(message)
                        self.line = line

                    def __str__(self):
                        if self.line:
                            return f"{self.args[0]} (line {self.line})"
                        return self.args[0]
                """,
            "pkg/main.py": """
                from pkg.errors import BadSignature, Located

                def verify(sig):
                    raise BadSignature(f"Signature {sig!r} does not match", payload=sig)

                def parse(line):
                    raise Located("unexpected end", line)
                """,
        },
    )
    assert sites[4].printed == "Signature {sig!r} does not match"
    assert sites[7].printed == "unexpected end"
    assert sites[7].unresolved is None


def test_message_tables_along_the_bases(tmp_path: Path) -> None:
    """`self.error_messages[key]` with a literal key reads the nearest class-level dict named
    so or ending in `_error_messages`: the raising instance's class first, then its bases."""
    sites = _sites(
        tmp_path,
        {
            "pkg/main.py": """
                from gettext import gettext as _

                class Field:
                    default_error_messages = {
                        "invalid": "Enter a valid value.",
                        "blank": _("This field cannot be blank."),
                    }

                    def make_error(self, key):
                        return ValueError(self.error_messages[key])

                class Integer(Field):
                    default_error_messages = {"invalid": "Enter a whole number."}

                    def clean(self, value):
                        if not value:
                            raise self.make_error("blank")
                        raise self.make_error("invalid")
                """,
        },
    )
    assert sites[17].printed == "This field cannot be blank."
    assert sites[18].printed == "Enter a whole number."
    assert sites[18].qualified_name == "builtins.ValueError"


def test_bad_input_is_reported_with_the_reason(tmp_path: Path) -> None:
    """Different classes on different paths, factories calling each other, a table built at
    run time and a `__str__` reading state set after construction: never guessed, each says
    why at the raise and what to do."""
    sites = _sites(
        tmp_path,
        {
            "pkg/main.py": """
                class Late(Exception):
                    def __str__(self):
                        return f"late: {self.detail}"

                def either(flag):
                    if flag:
                        return ValueError("a")
                    return TypeError("a")

                def ping(n):
                    return pong(n)

                def pong(n):
                    return ping(n)

                class Dynamic:
                    def __init__(self):
                        self.error_messages = {"invalid": "built at run time"}

                    def make_error(self, key):
                        return ValueError(self.error_messages[key])

                    def check(self, flag):
                        if flag == 1:
                            raise either(flag)
                        if flag == 2:
                            raise ping(flag)
                        if flag == 3:
                            raise self.make_error("invalid")
                        raise Late()
                """,
        },
    )
    reasons = {line: site.unresolved for line, site in sites.items() if site.unresolved}
    fix = "; give the raise its class and message by name, or mark the raise # errcat: ignore"
    assert reasons == {
        25: "either returns different classes on different paths (builtins.TypeError, "
        f"builtins.ValueError){fix}[reason]",
        27: f"ping calls itself through other factories; errcat cannot tell what it builds{fix}"
        "[reason]",
        29: "reads self.error_messages['invalid'], which no class-level dict literal named "
        "error_messages (or ending in _error_messages) holds on the class or its bases (a table "
        f"built at run time){fix}[reason]",
        30: "Late.__str__ reads self.detail, which Late's __init__ does not set from its "
        f"parameters (state set after construction){fix}[reason]",
    }
    assert all(sites[line].printed is None for line in reasons)


def test_star_imports_and_with_traceback(tmp_path: Path) -> None:
    """A class bound only by `from x import *` resolves through the call graph, and
    `raise err.with_traceback(tb)` of a caught `err` raises it again."""
    sites = _sites(
        tmp_path,
        {
            "pkg/exceptions.py": """
                class ParseException(Exception):
                    pass
                """,
            "pkg/main.py": """
                from pkg.exceptions import *

                def parse(s):
                    try:
                        int(s)
                    except ValueError as err:
                        raise err.with_traceback(None)
                    raise ParseException(f"cannot parse {s!r}")
                """,
        },
    )
    assert sites[7].reraise
    assert sites[8].qualified_name == "pkg.exceptions.ParseException"
    assert (sites[8].printed, sites[8].template) == (None, "cannot parse {s!r}")


def test_plain_raises_of_built_ins_are_not_touched(tmp_path: Path) -> None:
    """A package without factories or classes of its own costs no call graph and keeps
    every site as the scan gave it."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "main.py").write_text("def f(x):\n    raise ValueError(f'bad {x}')\n")
    report = scan_paths([tmp_path / "pkg"], cwd=tmp_path)
    assert read_printed(report, cwd=tmp_path) is report


def test_an_init_that_keeps_no_text_prints_the_positional_arguments(tmp_path: Path) -> None:
    """A class whose `__init__` stores its parameters and calls no base prints what
    `BaseException.__new__` kept: the raise's positional arguments, keywords never (`str()` of
    `Disconnect(code=1006)` is empty, of `Disconnect(1006)` the code)."""
    sites = _sites(
        tmp_path,
        {
            "pkg/errors.py": """
                class Disconnect(Exception):
                    def __init__(self, code=1000, reason=None):
                        self.code = code
                        self.reason = reason or ""
                """,
            "pkg/main.py": """
                from pkg.errors import Disconnect

                def closed():
                    raise Disconnect(code=1006)

                def coded(code):
                    raise Disconnect(code)
                """,
        },
    )
    assert sites[4].printed == ""
    assert sites[4].unresolved is None
    assert sites[7].printed == "{code}"


HELPERS = {
    "pkg/errors.py": """
        class TemplateSyntaxError(Exception):
            def __init__(self, message, lineno=None):
                super().__init__(message)
                self.lineno = lineno

        class TemplateAssertionError(TemplateSyntaxError):
            pass

        def bad_value(name):
            raise ValueError(f"bad value for {name}")
        """,
    "pkg/main.py": """
        from pkg.errors import TemplateSyntaxError, bad_value

        class Parser:
            def fail(self, msg, lineno=None, exc=TemplateSyntaxError):
                raise exc(msg, lineno)

            def maybe_fail(self, msg):
                if msg:
                    return msg
                raise ValueError(msg)

            def parse(self, token, *rest):
                if token == "}":
                    self.fail(f"unexpected {token!r}")
                self.fail("Expected an expression")  # errcat: ignore[kept for the test]
                self.maybe_fail("not a helper: it returns a value")
                self.fail(*rest)

        def check(key):
            bad_value(key)
        """,
}


def test_calls_of_raise_helpers_are_sites_of_what_they_raise(tmp_path: Path) -> None:
    """`self.fail("...")` of a method that ends by raising an exception built from its
    parameters is a site of that exception at the call, with the text the call passes: the
    class a parameter's default names, a helper's built-in across modules, the conditions and
    the ignore comment of the call's own lines. A function that may return a value is no
    helper, and a call whose text cannot be read is left to the helper's own raise."""
    sites = _sites(tmp_path, HELPERS)
    calls = {line: site for line, site in sites.items() if site.call}
    assert sorted(calls) == [14, 15, 20]
    unexpected, expected, checked = calls[14], calls[15], calls[20]
    assert (unexpected.qualified_name, unexpected.printed) == (
        "pkg.errors.TemplateSyntaxError",
        "unexpected {token!r}",
    )
    assert unexpected.through == "pkg.main.Parser.fail"
    assert unexpected.function == "Parser.parse" and unexpected.column == 13
    assert [(c.kind, c.code) for c in unexpected.conditions] == [("if", 'token == "}"')]
    assert unexpected.context is not None and unexpected.context.highlight_line == 14
    assert expected.printed == "Expected an expression"
    assert expected.ignored == "kept for the test"
    assert (checked.qualified_name, checked.printed) == (
        "builtins.ValueError",
        "bad value for {name}",
    )
    # The helpers' own raises are still sites of their own, as the scan found them.
    assert sites[5].call is False and sites[5].exception == "exc"


def test_helper_calls_are_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm reading gives the added call sites back whole, after their file's raises."""
    _sites(tmp_path, HELPERS)
    cache = tmp_path / ".errcat-cache"
    report = scan_paths([tmp_path / "pkg"], cwd=tmp_path, cache_dir=cache)
    cold = read_printed_cached(report, cwd=tmp_path, cache_dir=cache)
    monkeypatch.setattr("extractor.printed.read_printed", _refuse)
    warm = read_printed_cached(report, cwd=tmp_path, cache_dir=cache)
    assert warm.results == cold.results
    assert [site.call for site in warm.sites] == [False] * len(report.sites) + [True] * 3


def _refuse(*args: object, **kwargs: object) -> None:
    raise AssertionError("read again although no file changed")


def test_str_through_a_method_with_properties_locals_and_attributes_set_on_paths(
    tmp_path: Path,
) -> None:
    """`return self.formatted()` prints what that method returns; a property, a local of the
    method and an attribute `__init__` sets on several paths are values of their own, and
    the message the raise passes is spliced in."""
    sites = _sites(
        tmp_path,
        {
            "pkg/errors.py": """
                class ParseError(Exception):
                    def __init__(self, pstr, loc=0, msg=None):
                        if msg is None:
                            msg, pstr = pstr, ""
                        self.loc = loc
                        self.msg = msg
                        self.pstr = pstr
                        if loc < 0:
                            self.where = "start"
                        else:
                            self.where = "here"

                    @property
                    def lineno(self):
                        return self.pstr.count("\\n", 0, self.loc) + 1

                    def formatted(self):
                        found = f", found {self.pstr[self.loc:]!r}" if self.pstr else ""
                        return f"{self.msg}{found} (at char {self.loc}, line {self.lineno}, {self.where})"

                    def __str__(self):
                        return self.formatted()
                """,
            "pkg/main.py": """
                from pkg.errors import ParseError

                def parse(text, loc):
                    raise ParseError(text, loc, "Expected a digit")
                """,
        },
    )
    assert sites[4].unresolved is None
    assert sites[4].printed == "Expected a digit{found} (at char {loc}, line {lineno}, {where})"


def test_str_formatting_args_with_a_fallback_prints_the_formatted_text(tmp_path: Path) -> None:
    """`__str__` as `try: return self.args[0] % self.args[1:]` with a fallback for a failed
    format prints the formatted text where the format cannot fail (only `%s`/`%r`, as many
    as the values); a `%d`, a count that differs, or a class with its own `__init__` is not
    read, and the raise's first argument stands as its text."""
    sites = _sites(
        tmp_path,
        {
            "pkg/errors.py": '''
                class ParseFailure(ValueError):
                    """Raised when parsing fails."""

                    def __str__(self):
                        try:
                            return self.args[0] % self.args[1:]
                        except (TypeError, IndexError):
                            return super().__str__()
                ''',
            "pkg/main.py": """
                from pkg.errors import ParseFailure

                def parse(text, where):
                    if not text:
                        raise ParseFailure("String does not contain a date: %s", text)
                    if where:
                        raise ParseFailure("unknown token %r at %s (100%%)", "x", where)
                    if text == "?":
                        raise ParseFailure("bad count %d", text)
                    raise ParseFailure("two %s %s", text)
                """,
        },
    )
    assert sites[5].printed == "String does not contain a date: {text}"
    assert sites[7].printed == "unknown token 'x' at {where} (100%)"
    assert sites[9].printed == "bad count %d"
    assert sites[10].printed == "two %s %s"


def test_a_class_held_by_a_parameter_is_its_default(tmp_path: Path) -> None:
    """`raise exc(msg)` of a parameter left to a class default, and `raise self._exc(msg)` of
    an attribute `__init__` sets from such a parameter, raise that default unless a caller
    passes another: the site is read as the default's. A parameter the function rebinds, an
    attribute another method assigns, or a default that is no class stay unread."""
    sites = _sites(
        tmp_path,
        {
            "pkg/errors.py": """
                class TemplateError(Exception):
                    pass
                """,
            "pkg/main.py": """
                from pkg.errors import TemplateError

                def fail(msg, exc=TemplateError):
                    raise exc(msg)

                def fail_builtin(msg, *, exc=KeyError):
                    raise exc(msg)

                class Undefined:
                    def __init__(self, name, exc=TemplateError):
                        self.name = name
                        self._exc = exc

                    def fail(self):
                        raise self._exc(f"{self.name!r} is undefined")

                class Moving:
                    def __init__(self, exc=TemplateError):
                        self._exc = exc

                    def swap(self, other):
                        self._exc = other

                    def fail(self):
                        raise self._exc("moved")

                def rebound(msg, exc=TemplateError):
                    if not msg:
                        exc = ValueError
                    raise exc(msg)

                def not_a_class(msg, exc=len):
                    raise exc(msg)
                """,
        },
    )
    assert sites[4].qualified_name == "pkg.errors.TemplateError"
    assert sites[7].qualified_name == "builtins.KeyError"
    assert sites[15].qualified_name == "pkg.errors.TemplateError"
    assert sites[25].qualified_name is None
    assert sites[30].qualified_name is None
    assert sites[33].qualified_name is None


def test_str_adding_a_computed_report_to_the_message(tmp_path: Path) -> None:
    """`return self.msg + self.report.what()` (TorchScript's frontend errors): the message
    given to the constructor, then the computed report as a value of its own; a computed
    value of state construction never set leaves the site unread, as before."""
    sites = _sites(
        tmp_path,
        {
            "pkg/errors.py": """
                import reports

                class FrontendError(Exception):
                    def __init__(self, source_range, msg):
                        self.source_range = source_range
                        self.msg = msg
                        self.report = reports.Report(source_range)

                    def __str__(self):
                        return self.msg + self.report.what().lstrip()

                class NotSupported(FrontendError):
                    pass

                class Late(Exception):
                    def __init__(self, msg):
                        self.msg = msg

                    def __str__(self):
                        return self.msg + self.later.what()
                """,
            "pkg/main.py": """
                from pkg.errors import Late, NotSupported

                def loop(r):
                    raise NotSupported(r, "else branches of for loops aren't supported")

                def late():
                    raise Late("x")
                """,
        },
    )
    assert sites[4].printed == (
        "else branches of for loops aren't supported{report.what().lstrip()}"
    )
    assert sites[7].printed is None
    assert "later" in (sites[7].unresolved or "")


def test_a_message_a_function_of_the_package_returns(tmp_path: Path) -> None:
    """`raise RuntimeError(_mismatch(out, 3))` prints what `_mismatch` returns, its parameters
    in the call's terms (literal text spliced in, a value named as the parameter, as through
    factories), a method of the instance too; a function returning on several paths, or
    nothing with literal text, leaves the message as written."""
    sites = _sites(
        tmp_path,
        {
            "pkg/messages.py": """
                def _mismatch(output, index, kind="outputs"):
                    prefix = "" if index else "first "
                    return prefix + f"Jacobian mismatch for {kind} {index}:\\n{output}"

                def either(flag):
                    if flag:
                        return "yes"
                    return "no"

                def opaque(value):
                    return str(value)
                """,
            "pkg/main.py": """
                from pkg import messages
                from pkg.messages import _mismatch, either, opaque

                class Checker:
                    def describe(self, name):
                        return f"cannot check {name}"

                    def check(self, out, name):
                        raise ValueError(self.describe(name))

                def check(out):
                    raise RuntimeError(_mismatch(out, 3, kind="inputs"))

                def check_module(out):
                    raise RuntimeError(messages._mismatch(out, 3))

                def other(flag, value):
                    if flag:
                        raise RuntimeError(either(flag))
                    raise RuntimeError(opaque(value))
                """,
        },
    )
    assert sites[9].printed == "cannot check {name}"
    # Only the function could be rewritten (`errcat migrate` leaves such raises as they are).
    assert sites[9].through == "pkg.main.Checker.describe"
    assert sites[12].through == "pkg.messages._mismatch"
    assert sites[12].printed == "{prefix}Jacobian mismatch for inputs {index}:\n{output}"
    assert sites[15].printed == "{prefix}Jacobian mismatch for outputs {index}:\n{output}"
    assert sites[19].printed is None
    assert sites[20].printed is None
    assert sites[19].unresolved is None  # a built-in as written, nothing to fix


def test_a_message_parameter_with_literal_text_by_default(tmp_path: Path) -> None:
    """A raise of `msg.format(...)`, `msg` a parameter whose default is literal text, prints
    that text formatted (the raise stays as written: callers may pass other text); the calls
    of such a helper are sites printing the text each passes, `{}` and `{0}` fields filled
    by position; a `{0.name}` field, a default that is no text and a parameter rebound leave
    the message as written."""
    sites = _sites(
        tmp_path,
        {
            "pkg/main.py": """
                class Recurrent:
                    def check_size(self, hx, expected, msg="Expected size {}, got {!r}"):
                        if hx.size() != expected:
                            raise RuntimeError(msg.format(expected, list(hx.size())))

                    def forward(self, hx, expected):
                        self.check_size(hx, expected)
                        self.check_size(hx[0], expected, "First state: expected {1}, not {0}")

                def pair(arg, name, message="{0.name} must be a pair"):
                    if len(arg) != 2:
                        raise ValueError(message.format(name))

                def untold(arg, message=None):
                    if arg:
                        raise ValueError(message % arg)

                def rebound(arg, message="bad {}"):
                    message = message.upper()
                    raise ValueError(message.format(arg))
                """,
        },
    )
    own = sites[4]
    assert own.printed == "Expected size {expected}, got {list(hx.size())!r}"
    assert own.through == "pkg.main.Recurrent.check_size"
    calls = {line: site for line, site in sites.items() if site.call}
    assert calls[7].printed == "Expected size {expected}, got {list(hx.size())!r}"
    assert calls[8].printed == "First state: expected {list(hx.size())}, not {expected}"
    assert sites[12].printed is None
    assert sites[16].printed is None
    assert sites[20].printed is None


def test_a_local_extended_under_conditions_prints_its_opening(tmp_path: Path) -> None:
    """A local extended by `+=` under conditions or in loops after its last plain step prints
    what every path gives it first (the raising function stands as `through`, so `errcat
    migrate` leaves the raise as written); a conditional step before a plain one, a start
    with no literal word, and a local rebound in a branch leave the message unread."""
    sites = _sites(
        tmp_path,
        {
            "pkg/main.py": """
                def dispatch(name, types, mode):
                    msg = f"no implementation found for {name!r} on types {types}"
                    if mode:
                        msg += f" nor in mode {mode}"
                    raise TypeError(msg)

                def listing(items):
                    msg = "bad items:"
                    msg += " see below"
                    for item in items:
                        msg += f" {item}"
                    raise ValueError(msg)

                def middle(c):
                    msg = "start"
                    if c:
                        msg += " maybe"
                    msg += " end"
                    raise ValueError(msg)

                def empty(missing):
                    msg = ""
                    if missing:
                        msg += f"Missing fields: {missing}."
                    raise ValueError(msg)

                def rebound(c):
                    msg = "first"
                    if c:
                        msg = "second"
                    raise ValueError(msg)
                """,
        },
    )
    assert sites[5].template is None
    assert sites[5].printed == "no implementation found for {name!r} on types {types}"
    assert sites[5].through == "pkg.main.dispatch"
    assert sites[12].printed == "bad items: see below"
    assert sites[12].through == "pkg.main.listing"
    for line in (19, 25, 31):
        assert sites[line].printed is None and sites[line].through is None


def test_a_raise_in_a_nested_function_is_read_in_its_own_scope(tmp_path: Path) -> None:
    """A raise inside a closure is read in its own scope, as one in a function is."""
    sites = _sites(
        tmp_path,
        {
            "pkg/main.py": """
                def wrap(fn):
                    def wrapped(x, strict):
                        msg = f"cannot wrap {x!r}"
                        if strict:
                            msg += " in strict mode"
                        raise ValueError(msg)
                    return wrapped
                """,
        },
    )
    assert sites[6].printed == "cannot wrap {x!r}"
    assert sites[6].through == "pkg.main.wrap.wrapped"


def test_a_local_built_in_steps_passed_to_a_composing_class(tmp_path: Path) -> None:
    """A class that composes its text, given a local the raising function builds by `+=`
    steps, prints that local's text: the local is read along the blocks to the raise."""
    sites = _sites(
        tmp_path,
        {
            "pkg/main.py": """
                class ProcessError(Exception):
                    def __init__(self, msg, index, pid):
                        super().__init__(msg)
                        self.index = index

                def join(index, trace, pid):
                    msg = "process %d failed:" % index
                    if trace:
                        msg += " with a trace"
                        raise ProcessError(msg, index, pid)
                """,
        },
    )
    assert sites[10].printed == "process {index} failed: with a trace"


def test_a_constructor_binding_its_message_again_before_passing_it_on(tmp_path: Path) -> None:
    """A constructor that binds its message parameter again before its base's `__init__` is
    read through that binding; one that only extends it under a condition prints where the
    message starts; one binding it otherwise, undecided, cannot be read."""
    sites = _sites(
        tmp_path,
        {
            "pkg/main.py": """
                class CodedError(Exception):
                    def __init__(self, msg, code):
                        msg = f"[{code}] {msg}"
                        super().__init__(msg)

                class UserError(Exception):
                    def __init__(self, kind, msg, case=None):
                        if case is not None:
                            msg += "\\n"
                            msg += describe(case)
                        super().__init__(msg)

                class Picky(Exception):
                    def __init__(self, msg, upper):
                        if upper:
                            msg = msg.upper()
                        super().__init__(msg)

                def coded(x):
                    raise CodedError(f"bad {x}", "E1")

                def user(x):
                    raise UserError(1, f"cannot export {x}", case="cond")

                def picky(x, upper):
                    raise Picky(f"bad {x}", upper)
                """,
        },
    )
    assert sites[20].printed == "[E1] bad {x}"
    assert sites[23].printed == "cannot export {x}"
    assert sites[26].printed is None
    assert sites[26].unresolved is not None and "msg is bound again" in sites[26].unresolved


def test_with_traceback_in_a_closure_reads_the_exception_built(tmp_path: Path) -> None:
    """`raise X(...).with_traceback(None)` in a nested function prints what X is given, not
    what `with_traceback` is."""
    sites = _sites(
        tmp_path,
        {
            "pkg/main.py": """
                class ActionIndexError(Exception):
                    def __init__(self, msg, exc):
                        self.msg = msg
                        self.exc = exc

                def trim(func):
                    def wrapper(*args):
                        try:
                            return func(*args)
                        except IndexError as ie:
                            raise ActionIndexError(
                                "IndexError raised in parse action", ie
                            ).with_traceback(None)
                    return wrapper
                """,
        },
    )
    assert sites[11].printed is None  # two arguments: no text of its own to read
    assert sites[11].template == "IndexError raised in parse action"


def test_a_base_passing_star_args_on_prints_what_it_was_given(tmp_path: Path) -> None:
    """`def __init__(self, *args, **kwargs): super().__init__(*args, **kwargs)` passes on what
    it was given: the text of the subclass's call of it is what prints; `*args` bound again
    first cannot be read."""
    sites = _sites(
        tmp_path,
        {
            "pkg/main.py": """
                class DynamoError(RuntimeError):
                    def __init__(self, *args, **kwargs):
                        super().__init__(*args, **kwargs)
                        self.output = None

                class UserError(DynamoError):
                    def __init__(self, kind, msg):
                        super().__init__(msg)
                        self.kind = kind

                class Shuffled(RuntimeError):
                    def __init__(self, *args):
                        args = args[::-1]
                        super().__init__(*args)

                class Packed(RuntimeError):
                    def __init__(self, *args):
                        super().__init__(args)

                def export(kind, name):
                    raise UserError(kind, f"cannot export {name}")

                def shuffled(a):
                    raise Shuffled(f"first {a}", "second")

                def packed(a):
                    raise Packed(f"first {a}", "second")
                """,
        },
    )
    assert sites[21].printed == "cannot export {name}"
    assert sites[24].unresolved is not None and "passes *args" in sites[24].unresolved
    # The tuple itself passed as one argument prints as a tuple, not as the texts.
    assert sites[27].printed == "{args}"


def test_a_returned_text_stripped_at_a_field(tmp_path: Path) -> None:
    """`return f\"\"\"...{exp}\\n\"\"\".strip()` prints its literal ends stripped: the value at the
    end stands for itself, blanks and all."""
    sites = _sites(
        tmp_path,
        {
            "pkg/main.py": '''
                def _batched_msg(output_idx, res, exp):
                    return f"""
                For output {output_idx}:
                Got:
                {res}
                Expected:
                {exp}
                """.strip()

                def check(res, exp, i):
                    raise ValueError(_batched_msg(i, res, exp))
                ''',
        },
    )
    assert sites[11].printed == "For output {output_idx}:\nGot:\n{res}\nExpected:\n{exp}"
    assert sites[11].through == "pkg.main._batched_msg"
