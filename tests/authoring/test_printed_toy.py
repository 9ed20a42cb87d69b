"""A toy package whose errors are built by factories, helpers, composing classes, gettext and
message tables: `new` drafts what users see, `check` passes, `explain` finds the printed text
first, and `codegen` and `migrate` leave it green. The bad inputs are reported at the raise."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from catalog.cli import main
from catalog.entries.loader import load_catalog

PYPROJECT = """\
[project]
name = "toy"
requires-python = ">=3.9"

[tool.errcat]
package = "toy"
catalog = "errors"
generated = "toy/_errors.py"
"""

ERRORS = """
from gettext import gettext as _


class ToyError(Exception):
    pass


class KeyAlreadyPresent(ToyError):
    def __init__(self, key):
        super().__init__(f'Key "{key}" already exists.')


class NestedKeyPresent(KeyAlreadyPresent):
    def __init__(self, key, table):
        self.table = table
        super().__init__(key)


class BadParameter(ValueError):
    def __init__(self, message, param=None):
        super().__init__(message)
        self.param = param


class Late(Exception):
    def __str__(self):
        return f"late: {self.detail}"
"""

FIELDS = """
from toy.errors import BadParameter, KeyAlreadyPresent, Late, NestedKeyPresent, _


def make_exc(name):
    return ValueError(f"no such field: {name}")


class Field:
    default_error_messages = {
        "invalid": "Enter a valid value.",
        "blank": _("This field cannot be blank."),
    }

    def make_error(self, key):
        return BadParameter(self.error_messages[key])

    def fail(self, message):
        raise BadParameter(message)


class Integer(Field):
    default_error_messages = {"invalid": "Enter a whole number."}

    def clean(self, value):
        if not value:
            raise self.make_error("blank")
        if value.startswith("-"):
            self.fail(_("x must not be negative"))
        if not value.isdigit():
            raise self.make_error("invalid")
        if int(value) > 99:
            raise self.fail(_("x must be below 100"))
        raise make_exc(value)


def store(table, k):
    if k in table:
        raise KeyAlreadyPresent(k)
    table[k] = True


def store_nested(table, key):
    if key in table:
        raise NestedKeyPresent(key, table)
    table[key] = True


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

    def check(self):
        raise self.make_error("invalid")


def bad_inputs(flag):
    if flag == 1:
        raise either(flag)
    if flag == 2:
        raise ping(flag)
    if flag == 3:
        raise Late()
"""

_FINDING = re.compile(r"^(?P<path>[^:\n]+\.py):(?P<line>\d+):\d+: (?P<why>[^;\n]+)", re.M)


def _toy(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    for name, source in {
        "toy/__init__.py": "",
        "toy/errors.py": ERRORS,
        "toy/fields.py": FIELDS,
    }.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source).lstrip())
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _line_of(root: Path, text: str) -> int:
    lines = (root / "toy/fields.py").read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def test_toy_package_adopts_with_the_printed_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every message is drafted as `str(exc)` prints it, the bad inputs are reported with
    their reasons, and new → check → codegen → migrate → check stays green."""
    root = _toy(tmp_path)
    monkeypatch.chdir(root)
    code, _, err = _run(capsys, "new")
    assert code == 0, err
    reasons = {int(m["line"]): m["why"] for m in _FINDING.finditer(err)}
    assert reasons == {
        _line_of(root, "raise either(flag)"): (
            "either returns different classes on different paths (builtins.TypeError, "
            "builtins.ValueError)"
        ),
        _line_of(root, "raise ping(flag)"): "ping calls itself through other factories",
        _line_of(root, "    def check(self):") + 1: (
            "reads self.error_messages['invalid'], which no class-level dict literal named "
            "error_messages (or ending in _error_messages) holds on the class or its bases (a "
            "table built at run time)"
        ),
        _line_of(root, "raise Late()"): (
            "Late.__str__ reads self.detail, which Late's __init__ does not set from its "
            "parameters (state set after construction)"
        ),
    }
    catalog, problems = load_catalog(root / "errors")
    assert problems == []
    messages = sorted((entry.exception, entry.message) for entry in catalog)
    assert messages == [
        ("ValueError", "no such field: {name}"),
        ("toy.errors.BadParameter", "Enter a whole number."),
        ("toy.errors.BadParameter", "This field cannot be blank."),
        ("toy.errors.BadParameter", "x must be below 100"),
        ("toy.errors.BadParameter", "x must not be negative"),  # the helper's call
        ("toy.errors.BadParameter", "{message}"),  # the raise inside the helper itself
        ("toy.errors.KeyAlreadyPresent", 'Key "{key}" already exists.'),
        ("toy.errors.NestedKeyPresent", 'Key "{key}" already exists.'),
    ]
    # The person's step: an ignore, with new's reason, on each raise it could not draft.
    path = root / "toy/fields.py"
    lines = path.read_text().splitlines(keepends=True)
    for number, why in reasons.items():
        reason = why.replace("[", "(").replace("]", ")")[:60]
        lines[number - 1] = lines[number - 1].rstrip("\n") + f"  # errcat: ignore[{reason}]\n"
    path.write_text("".join(lines))
    for step in ("codegen", "check", "migrate", "check"):
        code, out, err = _run(capsys, step)
        assert code == 0, f"{step}: {out}{err}"
    # A factory's raise of a built-in stays as written: only the factory could change it.
    assert "raise make_exc(value)" in path.read_text()

    by_message = {entry.message: entry.id for entry in catalog}
    for printed, message in (
        ('Key "a" already exists.', None),
        ("Enter a whole number.", "Enter a whole number."),
        ("This field cannot be blank.", "This field cannot be blank."),
        ("x must be below 100", "x must be below 100"),
        ("x must not be negative", "x must not be negative"),
        ("no such field: age", "no such field: {name}"),
    ):
        code, out, err = _run(capsys, "explain", printed, "--json")
        assert code == 0, err
        first = json.loads(out)["matches"][0]
        if message is None:
            assert first["message"] == 'Key "{key}" already exists.'
        else:
            assert first["id"] == by_message[message]
