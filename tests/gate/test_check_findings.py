"""Every finding `errcat check` can produce, each asserted at its line, and clean legitimate code.

Each test builds a small project whose catalog has a typed entry with three parameters, a
typed entry without parameters, a retired entry, an entry of the package's own class
(catalogued in place) and a typed entry whose message is only its value (`{key}`); `pkg/base.py` raises each live entry correctly, and the probe module
holds the code under test. The findings compared are all the errors check reports, so a test
fails both when its finding is missing and when another appears.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import write_files

from catalog.cli import main

CATALOG = """\
module: pkg.base
errors:
  - id: "00000000000000a1"
    name: WrongDevice
    exception: ValueError
    status: draft
    message: "{name} must be on device {expected}, got {actual}"
  - id: "00000000000000a2"
    name: PoolEmpty
    exception: RuntimeError
    status: draft
    message: "the pool is empty"
  - id: "00000000000000a3"
    name: OldError
    exception: RuntimeError
    status: retired
    retired_reason: "the pool no longer has a legacy mode"
    message: "legacy mode {mode} is gone"
  - id: "00000000000000a4"
    name: PoolClosedError
    exception: pkg.base.PoolClosed
    status: draft
    message: "pool {name} is closed"
  - id: "00000000000000a5"
    name: MissingKey
    exception: KeyError
    status: draft
    message: "{key}"
"""

BASE = """\
from pkg.errors import MissingKey, PoolEmpty, WrongDevice


class PoolClosed(Exception):
    pass


def use(t, name):
    if t is None:
        raise PoolEmpty()
    if not name:
        raise MissingKey(key=name)
    if name:
        raise PoolClosed(f"pool {name} is closed")
    raise WrongDevice(name="t", expected="cpu", actual=t)
"""

PROBE = "pkg/probe.py"
CHECK = "run: errcat new, then errcat migrate; or mark it # errcat: ignore[reason]"
EXPECTED = "expected WrongDevice(name=..., expected=..., actual=...)"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_files(
        tmp_path,
        {
            "pyproject.toml": '[tool.errcat]\npackage = "pkg"\ncatalog = "knowledge"\n'
            'generated = "pkg/errors.py"\n',
            "pkg/__init__.py": "",
            "pkg/base.py": BASE,
            "knowledge/base.yaml": CATALOG,
        },
    )
    monkeypatch.chdir(tmp_path)
    assert main(["codegen"]) == 0
    return tmp_path


def errors(capsys: pytest.CaptureFixture[str], probe: str | None = None) -> list[str]:
    """The errors of `errcat check`, as `path:line:col: message; fix`, after writing `probe`
    (dedented) as pkg/probe.py."""
    if probe is not None:
        write_files(Path.cwd(), {PROBE: probe})
    capsys.readouterr()
    code = main(["check", "--json"])
    report = json.loads(capsys.readouterr().out)
    found = [
        f"{f['path']}:{f['line']}:{f['column']}: {f['message']}; {f['fix']}"
        for f in report["findings"]
        if f["severity"] == "error"
    ]
    assert code == (1 if found else 0)
    return found


def test_the_fixture_is_clean(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The base project has no errors: every finding below comes from its probe."""
    assert errors(capsys) == []


# Typed raises against their class.


def test_a_wrong_keyword_is_a_finding(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A keyword the class does not take, with the one it lacks, at the raise."""
    probe = """\
        from pkg.errors import WrongDevice


        def f(t):
            raise WrongDevice(name="t", expected="cpu", device=t)
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:5:5: WrongDevice is raised with keyword 'device', which it does not take, "
        f"and without keyword 'actual'; {EXPECTED}"
    ]


def test_a_missing_keyword_is_a_finding(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A keyword left out of a multi-line call is reported at the raise keyword."""
    probe = """\
        from pkg.errors import WrongDevice


        def f(t):
            if t:
                raise WrongDevice(
                    name="t",
                    actual=t,
                )
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:6:9: WrongDevice is raised without keyword 'expected'; {EXPECTED}"
    ]


def test_an_extra_keyword_is_a_finding(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every parameter given, plus one the class does not take."""
    probe = """\
        from pkg.errors import WrongDevice


        def f(t):
            raise WrongDevice(name="t", expected="cpu", actual=t, hint="move it")
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:5:5: WrongDevice is raised with keyword 'hint', which it does not take; "
        f"{EXPECTED}"
    ]


def test_a_positional_message_is_a_finding(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typed class built like the built-in it replaces: positional, and missing every keyword."""
    probe = """\
        from pkg.errors import PoolEmpty, WrongDevice


        def f(t):
            if t:
                raise WrongDevice(f"t must be on cpu, got {t}")
            raise PoolEmpty("the pool is empty")
        """
    assert errors(capsys, probe) == [
        f'{PROBE}:6:9: WrongDevice is raised with positional argument f"t must be on cpu, got '
        "{t}\" (its parameters are keyword-only), and without keywords 'name', 'expected', "
        f"'actual'; {EXPECTED}",
        f'{PROBE}:7:5: PoolEmpty is raised with positional argument "the pool is empty" (its '
        "parameters are keyword-only); expected PoolEmpty()",
    ]


def test_a_bare_class_is_a_finding(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`raise X` without a call of a class that takes parameters, through an attribute too; a
    class without parameters may be raised bare."""
    probe = """\
        import pkg.errors
        from pkg.errors import PoolEmpty, WrongDevice


        def f(t):
            if t:
                raise WrongDevice
            if t is None:
                raise pkg.errors.WrongDevice from None
            raise PoolEmpty
        """
    bare = "is raised as a class, without a call"
    # PoolEmpty takes no parameters: `raise PoolEmpty` calls it as `PoolEmpty()` would.
    assert errors(capsys, probe) == [
        f"{PROBE}:7:9: WrongDevice {bare}; {EXPECTED}",
        f"{PROBE}:9:9: WrongDevice {bare}; {EXPECTED}",
    ]


def test_unpacked_arguments_cannot_be_verified(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`**mapping` and `*args` hide what the call passes: each is a finding that says so, even
    when the named keywords alone would fit."""
    probe = """\
        from pkg.errors import WrongDevice


        def f(t, options, args):
            if t:
                raise WrongDevice(name="t", expected="cpu", actual=t, **options)
            if options:
                raise WrongDevice(**options)
            raise WrongDevice(*args, name="t", expected="cpu", actual=t)
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:6:9: WrongDevice is raised with **options unpacked, which check cannot "
        f"verify; {EXPECTED}",
        f"{PROBE}:8:9: WrongDevice is raised with **options unpacked, which check cannot "
        f"verify, and without keywords 'name', 'expected', 'actual'; {EXPECTED}",
        f"{PROBE}:9:5: WrongDevice is raised with *args unpacked, which check cannot verify; "
        f"{EXPECTED}",
    ]


def test_a_typed_exception_built_into_a_variable(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`err = X(...); raise err` is a raise of X: clean when the call fits, a finding at the
    raise naming the variable when it does not."""
    probe = """\
        from pkg.errors import PoolEmpty, WrongDevice


        def good(t):
            err = WrongDevice(name="t", expected="cpu", actual=t)
            err.add_note("while moving t")
            raise err


        def bad(t):
            error: Exception = WrongDevice(name="t", actual=t)
            raise error from None


        def empty():
            problem = PoolEmpty()
            raise problem
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:12:5: WrongDevice, raised through error, is built without keyword "
        f"'expected'; {EXPECTED}"
    ]


def test_a_reraise_by_name_is_not_a_new_raise(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`except X as err: raise err` raises the caught exception again, like a bare `raise`."""
    probe = """\
        from pkg.errors import WrongDevice


        def f(move, t):
            try:
                move(t)
            except WrongDevice as err:
                raise err
            except (KeyError, IndexError) as err:
                if t:
                    raise err from None
                raise
        """
    assert errors(capsys, probe) == []


def test_a_name_bound_twice_is_not_followed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A variable bound again (even a handler's name) may hold anything: it stays unknown,
    unless the statement right before the raise binds it (then it holds what that built)."""
    probe = """\
        from pkg.errors import WrongDevice


        def f(move, t):
            err = WrongDevice(name="t", expected="cpu", actual=t)
            if t:
                err = RuntimeError("other")
            raise err


        def g(move, t):
            try:
                move(t)
            except WrongDevice as err:
                err = KeyError(t)
                raise err
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:8:5: uncatalogued raise of err; {CHECK}",
        f"{PROBE}:16:9: uncatalogued raise of KeyError; {CHECK}",
    ]


def test_a_class_not_in_the_catalog(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A class of the generated module that no entry defines (its entry was deleted)."""
    probe = """\
        from pkg import errors


        def f():
            raise errors.PoolDrained(size=0)
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:5:5: raises pkg.errors.PoolDrained, which is not in the catalog; restore its "
        "entry, or raise a catalogued class"
    ]


def test_a_retired_entry_still_raised(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A typed raise of a retired entry, and a raw raise of its message."""
    probe = """\
        from pkg.errors import OldError


        def f(mode):
            if mode:
                raise OldError(mode=mode)
            raise RuntimeError(f"legacy mode {mode} is gone")
        """
    retired = (
        "raises retired entry 00000000000000a3 (OldError); raise its replacement, or set the "
        "entry's status back to active"
    )
    assert errors(capsys, probe) == [f"{PROBE}:6:9: {retired}", f"{PROBE}:7:5: {retired}"]


def test_a_raw_raise_of_a_typed_entry(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The built-in raised with a typed entry's message: migrate would make it typed."""
    probe = """\
        def f(name, expected, actual):
            raise ValueError(f"{name} must be on device {expected}, got {actual}")
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:2:5: raises ValueError with the message of entry 00000000000000a1; raise the "
        "typed WrongDevice instead; run: errcat migrate"
    ]


def test_an_uncatalogued_raise(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A raise no entry covers, of a built-in, of another class and of an expression."""
    probe = """\
        def f(t, errors):
            if t:
                raise KeyError(t)
            if errors:
                raise errors[0]
            raise ValueError(f"{t} must be on device cpu")
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:3:9: uncatalogued raise of KeyError; {CHECK}",
        f"{PROBE}:5:9: uncatalogued raise of an expression; {CHECK}",
        f"{PROBE}:6:5: uncatalogued raise of ValueError; {CHECK}",
    ]


def test_a_file_that_cannot_be_scanned(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file Python cannot parse is a finding at the error's position, the others still count."""
    probe = """\
        def f(:
            raise ValueError("x")
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:1:7: cannot scan: cannot parse: invalid syntax; fix the file so Python can "
        "parse it"
    ]


# Entries against the package.


def test_an_entry_raised_nowhere(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Removing the only raise of a live entry reports the entry at its YAML position."""
    base = project / "pkg" / "base.py"
    base.write_text(base.read_text().replace("raise PoolEmpty()", "return None"))
    assert errors(capsys) == [
        "knowledge/base.yaml:8:5: entry 00000000000000a2 (PoolEmpty) is raised nowhere in pkg; "
        "raise it, or set status: retired with a retired_reason"
    ]


def test_an_entry_named_like_a_class_of_the_package(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A typed entry's name that the package also defines as a class, reported at the name."""
    probe = """\
        class WrongDevice(Exception):
            pass
        """
    assert errors(capsys, probe) == [
        "knowledge/base.yaml:4:11: name WrongDevice is also a class of the package (probe.py:1);"
        " the two would shadow each other; rename the entry and its raises"
    ]


# Exemptions.


def test_an_exemption_with_a_reason_is_accepted(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reasoned ignore on the raise line of an uncatalogued raise, one-line or not; a message
    that is only a value (the `{key}` entry's) says nothing about which entry it would be."""
    probe = """\
        def f(t):
            if t:
                raise KeyError(t)  # errcat: ignore[mapping protocol]
            raise LookupError(  # errcat: ignore[mirrors dict.pop]
                t
            )
        """
    assert errors(capsys, probe) == []


def test_an_exemption_without_a_reason(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An empty or blank reason exempts nothing without saying why: a finding."""
    probe = """\
        def f(t):
            if t:
                raise KeyError(t)  # errcat: ignore[]
            raise IndexError(t)  # errcat: ignore[   ]
        """
    blank = (
        "exemption without a reason; say why the raise is not catalogued: "
        "# errcat: ignore[<reason>]"
    )
    assert errors(capsys, probe) == [f"{PROBE}:3:9: {blank}", f"{PROBE}:4:5: {blank}"]


def test_an_exemption_on_another_line_of_the_raise(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A comment on any line of the raise statement exempts it (a formatter moves a trailing
    comment to an argument or the closing parenthesis); one after the statement does not."""
    probe = """\
        def f(t):
            raise KeyError(
                t,  # errcat: ignore[mapping protocol]
            )


        def g(t):
            raise KeyError(
                t,
            )  # errcat: ignore[moved by the formatter]
            x = 1  # errcat: ignore[after the raise]
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:11:12: exemption [after the raise] matches no raise site; remove the "
        "comment, or move it onto the raise line",
    ]


def test_an_exemption_that_matches_no_raise(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ignore comment on a line that raises nothing, even the line before a raise."""
    probe = """\
        def f(t):
            # errcat: ignore[left over]
            return t
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:2:5: exemption [left over] matches no raise site; remove the comment, or "
        "move it onto the raise line"
    ]


def test_an_exemption_on_a_typed_raise(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A typed raise is catalogued already: its ignore comment is not needed."""
    probe = """\
        from pkg.errors import PoolEmpty


        def f():
            raise PoolEmpty()  # errcat: ignore[legacy]
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:5:5: exemption [legacy] on a catalogued raise of PoolEmpty is not needed; "
        "remove the errcat: ignore comment"
    ]


def test_an_exemption_on_a_raw_raise_the_catalog_covers(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ignore hides a built-in's raise whose message is a catalogued template, written as
    the entry writes it or with other names for its values: raise the typed class instead."""
    probe = """\
        def f(name, expected, actual, t, d):
            if t:
                raise ValueError(f"{name} must be on device {expected}, got {actual}")  # errcat: ignore[old]
            raise ValueError(f"{t} must be on device {d}, got {t.device}")  # errcat: ignore[old]
        """
    hides = (
        "exemption [old] hides a raise the catalog covers: ValueError with the message of entry "
        "00000000000000a1; remove the comment and raise the typed WrongDevice instead"
    )
    assert errors(capsys, probe) == [
        f"{PROBE}:3:9: {hides} (run: errcat migrate)",
        f"{PROBE}:4:5: {hides}",
    ]


def test_an_exempted_raise_still_raises_its_entry(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An entry whose only raise carries a needless exemption is not also "raised nowhere"."""
    base = project / "pkg" / "base.py"
    old = 'raise PoolClosed(f"pool {name} is closed")'
    base.write_text(base.read_text().replace(old, old + "  # errcat: ignore[old]"))
    assert errors(capsys) == [
        "pkg/base.py:14:9: exemption [old] on a catalogued raise of PoolClosedError is not "
        "needed; remove the errcat: ignore comment"
    ]


def test_an_exemption_on_a_raise_catalogued_in_place(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An ignore on a raise of the package's own class with its entry's message is not needed;
    the same class with other wording is the exemption's business."""
    probe = """\
        from pkg.base import PoolClosed


        def f(name, label):
            if name:
                raise PoolClosed(f"pool {name} is closed")  # errcat: ignore[old]
            raise PoolClosed(f"pool {label} is closed")  # errcat: ignore[labels differ]
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:6:9: exemption [old] on a catalogued raise of PoolClosedError is not needed; "
        "remove the errcat: ignore comment"
    ]


def test_an_exemption_on_a_retired_raise(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An ignore does not hide that a retired entry is still raised."""
    probe = """\
        def f(mode):
            raise RuntimeError(f"legacy mode {mode} is gone")  # errcat: ignore[compat]
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:2:5: exemption [compat] hides a raise of retired entry 00000000000000a3 "
        "(OldError); remove the comment and raise its replacement, or set the entry's status "
        "back to active"
    ]


def test_an_exemption_on_a_reraise(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Re-raises are never findings, so an ignore on one is not needed."""
    probe = """\
        def f(move):
            try:
                move()
            except KeyError as err:
                raise err  # errcat: ignore[keep]
            except IndexError:
                raise  # errcat: ignore[keep]
        """
    needless = (
        "exemption [keep] on a re-raise is not needed: check never reports re-raises; remove the "
        "errcat: ignore comment"
    )
    assert errors(capsys, probe) == [f"{PROBE}:5:9: {needless}", f"{PROBE}:7:9: {needless}"]


# The catalog and codegen stages.


def test_a_broken_catalog_skips_the_later_stages(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Catalog findings come alone: the stages that read the catalog are skipped, with why."""
    catalog = project / "knowledge" / "base.yaml"
    catalog.write_text(catalog.read_text().replace('"{name} must', '"{self.name} must'))
    write_files(project, {PROBE: "raise KeyError(1)\n"})
    capsys.readouterr()
    assert main(["check", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert {f["stage"] for f in report["findings"]} == {"catalog"}
    assert report["skipped"] == ["codegen, sites, entries and exemptions: the catalog has errors"]


def test_a_missing_or_stale_generated_module(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The generated module deleted, then edited by hand."""
    module = project / "pkg" / "errors.py"
    text = module.read_text()
    module.unlink()
    # Without the module nothing resolves to it; only its absence is asked about here.
    assert "pkg/errors.py:1:1: the generated module is missing; run: errcat codegen" in errors(
        capsys
    )
    module.write_text(text + "EDITED = 1\n")
    assert errors(capsys) == [
        "pkg/errors.py:1:1: the generated module is stale: it differs from what the catalog "
        "generates; run: errcat codegen"
    ]


def test_drafts_are_warnings(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Draft entries are warnings, and the exit code stays 0."""
    capsys.readouterr()
    assert main(["check", "--json"]) == 0
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert {(f["severity"], f["stage"]) for f in findings} == {("warning", "drafts")}
    assert any("PoolEmpty" in f["message"] for f in findings)


def test_migrate_rewrites_the_call_a_raised_variable_holds(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A raw raise built into a variable is found like any other; migrate rewrites the call
    assigned to the variable, leaves `raise err` as it is, and check then accepts it."""
    probe = """\
        def f(name, expected, actual):
            err = ValueError(f"{name} must be on device {expected}, got {actual}")
            raise err
        """
    assert errors(capsys, probe) == [
        f"{PROBE}:3:5: raises ValueError, built into err, with the message of entry "
        "00000000000000a1; raise the typed WrongDevice instead; run: errcat migrate (it "
        "rewrites the call assigned to err)"
    ]
    assert main(["migrate"]) == 0
    migrated = (project / PROBE).read_text()
    assert (
        "    err = WrongDevice(name=name, expected=expected, actual=actual)\n    raise err\n"
        in (migrated)
    )
    assert errors(capsys) == []


def test_a_requires_python_older_than_the_module_serves(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The package declaring a Python the generated module cannot run on, at the value."""
    pyproject = project / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "pkg"\nrequires-python = ">=3.6"\n\n' + pyproject.read_text()
    )
    assert errors(capsys) == [
        'pyproject.toml:3:19: requires-python ">=3.6" admits Python 3.6, older than 3.7, the '
        'oldest the generated module supports; raise it to ">=3.7"'
    ]
