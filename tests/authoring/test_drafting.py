"""`errcat new` on code written by others: every site it can draft is drafted and valid, every
site it cannot is reported at the raise, and nothing else is held back by it."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from catalog.cli import main
from catalog.core.model import Entry
from catalog.entries.loader import load_catalog
from catalog.entries.validate import validate

PYPROJECT = """\
[project]
name = "pkg"
requires-python = ">=3.9"

[tool.errcat]
package = "pkg"
catalog = "errors"
generated = "pkg/_errors.py"
"""


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    for name, source in {"pkg/__init__.py": "", **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
    return tmp_path


def run(root: Path, monkeypatch: pytest.MonkeyPatch, *argv: str) -> int:
    monkeypatch.chdir(root)
    return main(list(argv))


def entries(root: Path) -> dict[str, Entry]:
    catalog, problems = load_catalog(root / "errors")
    assert problems == []
    assert validate(catalog) == []
    return {entry.message: entry for entry in catalog}


def test_awkward_sites_get_valid_drafts_and_an_importable_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What broke `new` on torch: unusual built-ins, an empty or placeholder-only message, a
    very long message, placeholders named like exception attributes."""
    long_words = " ".join(f"word{n}alpha" for n in range(30))
    root = project(
        tmp_path,
        {
            "pkg/odd.py": f'''
                import warnings

                def f(value, args, params, errno):
                    raise SyntaxError("unexpected token in the expression")
                    raise UserWarning("deprecated keyword used")
                    raise ValueError("")
                    raise ValueError(f"{{value}}")
                    raise RuntimeError("{long_words}")
                    raise TypeError(f"bad {{args}} and {{params}}")
                    raise OSError(f"cannot open: {{errno}}")
                ''',
        },
    )
    assert run(root, monkeypatch, "new") == 0
    found = entries(root)
    assert found["unexpected token in the expression"].exception == "SyntaxError"
    assert found["deprecated keyword used"].name.endswith("Warning")
    assert found[""].name == "BareValueError"
    assert found["{value}"].name == "ValueValueError"
    assert all(len(entry.name) <= 60 for entry in found.values())
    assert "bad {args_value} and {params_value}" in found
    assert "cannot open: {errno_value}" in found
    assert run(root, monkeypatch, "codegen") == 0
    spec = importlib.util.spec_from_file_location("pkg_errors", root / "pkg" / "_errors.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pkg_errors"] = module
    try:
        spec.loader.exec_module(module)
        error = getattr(module, found["{value}"].name)(value=3)
        assert isinstance(error, ValueError) and str(error) == "3"
        warning = getattr(module, found["deprecated keyword used"].name)()
        assert isinstance(warning, UserWarning)
    finally:
        del sys.modules["pkg_errors"]


def test_undraftable_sites_are_reported_and_the_rest_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each site `new` cannot draft is one `path:line:col: why; fix` line; the others land."""
    root = project(
        tmp_path,
        {
            "pkg/mixed.py": """
                def make_error():
                    return ValueError("x")

                class Parser:
                    error_class = ValueError

                    def fail(self, args):
                        raise self.error_class("from an attribute")
                        raise make_error()
                        raise ValueError(*args)
                        raise OSError(2, "no such file")
                        raise (ValueError if args else TypeError)("either")
                        raise KeyError("still drafted")
                """,
            "pkg/broken.py": "def f(:\n    raise ValueError('never read')\n",
        },
    )
    assert run(root, monkeypatch, "new") == 0
    err = capsys.readouterr().err
    lines = err.splitlines()
    reasons = {int(line.split(":")[1]): line for line in lines if line.startswith("pkg/mixed.py:")}
    # `raise make_error()` is read through the factory: a ValueError saying "x".
    assert sorted(reasons) == [9, 11, 12, 13]
    assert "cannot resolve self.error_class" in reasons[9]
    assert "cannot be read from the source" in reasons[11]
    assert "passes more than a message to OSError" in reasons[12]
    assert "raises the value of an expression" in reasons[13]
    assert all("# errcat: ignore[reason]" in line for line in reasons.values())
    assert any(line.startswith("pkg/broken.py:1:") and "cannot scan" in line for line in lines)
    assert sorted(entries(root)) == ["still drafted", "x"]


def test_one_entry_per_message_across_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same (exception, message) in two modules is one entry, and migrate rewrites both."""
    raise_it = 'def f(n):\n    raise ValueError(f"n must be even, got {n}")\n'
    root = project(
        tmp_path, {"pkg/a.py": raise_it, "pkg/b/__init__.py": "", "pkg/b/c.py": raise_it}
    )
    assert run(root, monkeypatch, "new") == 0
    (entry,) = entries(root).values()
    assert entry.module == "pkg.a"
    assert run(root, monkeypatch, "codegen") == 0
    assert run(root, monkeypatch, "migrate") == 0
    for name in ("pkg/a.py", "pkg/b/c.py"):
        text = (root / name).read_text()
        assert f"raise {entry.name}(n=n)" in text
        assert f"from pkg._errors import {entry.name}" in text
    assert run(root, monkeypatch, "check") == 0


def test_a_shared_message_is_filed_under_its_most_public_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Raised by a private helper module first by path and by the public one: the entry goes
    to the public module, whose users meet it, and its page lists that site first."""
    from catalog.core.config import load_config
    from catalog.pages.content import gather, render

    raise_it = 'def f(lr):\n    raise ValueError(f"Invalid learning rate: {lr}")\n'
    root = project(
        tmp_path,
        {
            "pkg/_impl/__init__.py": "",
            "pkg/_impl/functional_adam.py": raise_it,
            "pkg/distributed/__init__.py": "",
            "pkg/distributed/optim/__init__.py": "",
            "pkg/distributed/optim/adam.py": raise_it,
            "pkg/optim/__init__.py": "",
            "pkg/optim/adam.py": raise_it,
        },
    )
    assert run(root, monkeypatch, "new") == 0
    (entry,) = entries(root).values()
    assert entry.module == "pkg.optim.adam"
    config = load_config(root)
    catalog, _ = load_catalog(config.catalog)
    content = render(
        gather(config, catalog, site_url="http://127.0.0.1:8000/", repo_url=None, site_name="p")
    )
    document = content.api[f"api/errors/{entry.id}.json"]
    assert isinstance(document, dict)
    assert [source["path"] for source in document["sources"]] == [
        "pkg/optim/adam.py",
        "pkg/distributed/optim/adam.py",
        "pkg/_impl/functional_adam.py",
    ]


def test_names_avoid_the_package_s_classes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A draft is never named like a class the package defines, nor like a built-in."""
    root = project(
        tmp_path,
        {
            "pkg/m.py": """
                class QueueFullError(Exception):
                    pass

                def f():
                    raise RuntimeError("queue full")
                    raise LookupError("{lookup}")
                """,
        },
    )
    assert run(root, monkeypatch, "new") == 0
    found = entries(root)
    assert found["queue full"].name == "QueueFullError2"
    assert found["{{lookup}}"].name == "LookupError2"


def test_dry_run_prints_the_yaml_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--dry-run` shows each file it would write, whole."""
    root = project(tmp_path, {"pkg/m.py": 'def f():\n    raise ValueError("boom")\n'})
    assert run(root, monkeypatch, "new", "--dry-run") == 0
    out = capsys.readouterr().out
    assert "--- errors/m.yaml" in out
    assert 'message: "boom"' in out
    assert not (root / "errors").exists()


def test_check_reports_a_name_that_a_package_class_shadows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An entry renamed by hand to a class the package defines is a finding at its name."""
    root = project(tmp_path, {"pkg/m.py": 'def f():\n    raise ValueError("boom")\n'})
    assert run(root, monkeypatch, "new") == 0
    yaml_path = root / "errors" / "m.yaml"
    entry = entries(root)["boom"]
    yaml_path.write_text(yaml_path.read_text().replace(entry.name, "Parser"))
    (root / "pkg" / "parse.py").write_text("class Parser:\n    pass\n")
    assert run(root, monkeypatch, "codegen") == 0
    capsys.readouterr()
    assert run(root, monkeypatch, "check") == 1
    out = capsys.readouterr().out  # check prints its findings on stdout
    assert "errors/m.yaml:5:11: name Parser is also a class of the package (parse.py:1)" in out


def test_dunder_placeholders_are_drafted_under_plain_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A field whose root is a dunder (`{self.__class__.__name__}`, `{type(self).__qualname__}`)
    becomes a plain parameter (`{class_name}`, `{qualname}`); migrate passes it the whole
    expression, so the typed raise says what the raw one said."""
    root = project(
        tmp_path,
        {
            "pkg/box.py": """
                class Box:
                    def close(self):
                        raise RuntimeError(f"{self.__class__.__name__} is closed")

                    def put(self, x):
                        raise TypeError(f"{type(self).__qualname__} holds numbers, not {type(x).__name__}")
                """,
        },
    )
    assert run(root, monkeypatch, "new") == 0
    found = entries(root)
    assert set(found) == {
        "{class_name} is closed",
        "{qualname} holds numbers, not {x}",
    }
    assert run(root, monkeypatch, "codegen") == 0
    assert run(root, monkeypatch, "migrate") == 0
    source = (root / "pkg" / "box.py").read_text()
    closed = found["{class_name} is closed"].name
    assert f"raise {closed}(class_name=self.__class__.__name__)" in source
    # Over the line length, the call is wrapped as black and ruff format wrap it.
    assert (
        "Error(\n            qualname=type(self).__qualname__, x=type(x).__name__\n        )"
        in source
    )
    assert run(root, monkeypatch, "check") == 0
    said = subprocess.run(
        [
            sys.executable,
            "-c",
            "from pkg.box import Box\n"
            "for call in (lambda: Box().close(), lambda: Box().put([])):\n"
            "    try:\n"
            "        call()\n"
            "    except Exception as exc:\n"
            "        print(type(exc).__mro__[2].__name__, exc)\n",
        ],
        cwd=root,
        env={**os.environ, "ERRCAT_DOCS_LINKS": "0"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert said.splitlines() == [
        "RuntimeError Box is closed",
        "TypeError Box holds numbers, not list",
    ]
