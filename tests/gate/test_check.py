"""`errcat check`, `new` and `migrate` on small projects and on a copy of this one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from catalog.cli import main

ROOT = Path(__file__).resolve().parents[2]

PYPROJECT = """\
[tool.errcat]
package = "pkg"
catalog = "knowledge"
generated = "pkg/errors.py"
"""

MODULE = '''\
"""A module with two checks."""


def open_pool(size):
    if size <= 0:
        raise ValueError(f"pool size must be positive, got {size}")
    return size


def take(pool, n):
    if n > pool:
        raise RuntimeError(f"cannot take {n} from a pool of {pool}")
    return n
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "pool.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(["check", "--json"])
    report = json.loads(capsys.readouterr().out)
    lines = [
        f"{f['path']}:{f['line']}:{f['column']}: {f['message']}; {f['fix']}"
        for f in report["findings"]
        if f["severity"] == "error"
    ]
    return code, lines


def test_adoption_path_end_to_end(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """new → codegen → migrate turns raw raises into catalogued typed raises that check accepts."""
    code, lines = _check(capsys)
    assert code == 1
    assert (
        "pkg/pool.py:6:9: uncatalogued raise of ValueError; run: errcat new, then errcat migrate; "
        "or mark it # errcat: ignore[reason]" in lines
    )
    assert main(["new"]) == 0
    text = (project / "knowledge" / "pool.yaml").read_text(encoding="utf-8")
    assert 'message: "pool size must be positive, got {size}"' in text
    assert "status: draft" in text
    assert main(["codegen"]) == 0
    code, lines = _check(capsys)
    assert code == 1
    assert any("raise the typed" in line and line.endswith("run: errcat migrate") for line in lines)
    assert main(["migrate"]) == 0
    migrated = (project / "pkg" / "pool.py").read_text(encoding="utf-8")
    assert "raise PoolSizePositiveError(size=size)" in migrated
    assert "from pkg.errors import" in migrated
    code, lines = _check(capsys)
    assert (code, lines) == (0, [])
    assert main(["codegen", "--check"]) == 0


def test_new_dry_run_writes_nothing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`new --dry-run` prints the drafts and leaves the catalog folder alone."""
    assert main(["new", "--dry-run"]) == 0
    assert "name: PoolSizePositiveError" in capsys.readouterr().out
    assert not (project / "knowledge").exists()


def test_migrate_dry_run_prints_diff(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`migrate --dry-run` prints a unified diff and changes no file."""
    assert main(["new"]) == 0
    assert main(["codegen"]) == 0
    capsys.readouterr()
    assert main(["migrate", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "--- a/pkg/pool.py" in out
    assert '-        raise ValueError(f"pool size must be positive, got {size}")' in out
    assert (project / "pkg" / "pool.py").read_text(encoding="utf-8") == MODULE


def test_codegen_check_reports_stale_module(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A catalog edit without codegen makes `codegen --check` exit 1 with a diff and the fix."""
    assert main(["new"]) == 0
    assert main(["codegen"]) == 0
    path = project / "knowledge" / "pool.yaml"
    path.write_text(
        path.read_text(encoding="utf-8").replace("got {size}", "got {size!r}"), encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["codegen", "--check"]) == 1
    captured = capsys.readouterr()
    assert '+    template = "pool size must be positive, got {size!r}"' in captured.out
    assert "run: errcat codegen" in captured.err


@pytest.fixture
def copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of this project's runtime, catalog and configuration (mkdocs.yml's site_url is
    the generated module's docs link)."""
    for name in ("pyproject.toml", "mkdocs.yml"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(
        ROOT / "runtime", tmp_path / "runtime", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(ROOT / "catalog" / "errors", tmp_path / "catalog" / "errors")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_copy_of_this_project_passes(copied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The project as committed has no drift."""
    assert _check(capsys) == (0, [])


def test_drift_is_reported_with_positions(copied: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An uncatalogued raise, an entry raised nowhere and a stale exemption are each reported."""
    bridge = copied / "runtime" / "tensor_bridge.py"
    source = bridge.read_text(encoding="utf-8")
    lines = source.splitlines(keepends=True)
    # 1. Remove the only raise of Complex128Unsupported.
    removed = next(i for i, line in enumerate(lines) if "raise Complex128Unsupported()" in line)
    lines[removed] = lines[removed].replace("raise Complex128Unsupported()", "pass")
    # 2. Add an uncatalogued raise and 3. an exemption on a line that raises nothing.
    lines.append("\n\ndef _extra(x: int) -> None:\n    if x:\n        raise KeyError(x)\n")
    lines.append("    return None  # errcat: ignore[left over]\n")
    bridge.write_text("".join(lines), encoding="utf-8")
    total = len(lines) + 4  # the appended text spans 5 lines after the blank ones
    code, found = _check(capsys)
    assert code == 1
    yaml_path = "catalog/errors/tensor_bridge.yaml"
    entry_line = next(
        n
        for n, line in enumerate((copied / yaml_path).read_text().splitlines(), 1)
        if "id: 6e1d4aa080432dab" in line
    )
    assert found == sorted(found, key=lambda x: (x.split(":")[0], int(x.split(":")[1])))
    assert (
        f"{yaml_path}:{entry_line}:5: entry 6e1d4aa080432dab (Complex128Unsupported) is raised nowhere in "
        "runtime; raise it, or set status: retired with a retired_reason" in found
    )
    assert any(
        line.startswith("runtime/tensor_bridge.py:") and ": uncatalogued raise of KeyError;" in line
        for line in found
    )
    assert any(
        line.startswith(f"runtime/tensor_bridge.py:{total}:")
        and "exemption [left over] matches no raise site" in line
        for line in found
    )
    assert len(found) == 3, found


def _report(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["check", "--json"])
    return code, capsys.readouterr().out


def test_cached_runs_report_what_a_cold_run_does(
    copied: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second run answers from .errcat-cache/ without loading the catalog, reading the
    package's files or matching a site again, and says exactly what the first said; edits to a
    catalog file or to a source file are seen at once."""
    import catalog.entries.loader
    import catalog.entries.validate
    import catalog.gate.check

    # Every file counts as settled at once, so that the second run trusts what the first stored.
    monkeypatch.setattr(catalog.entries.loader, "SETTLED_NS", -(10**12))
    cold = _report(capsys)
    assert cold[0] == 0
    assert (copied / ".errcat-cache" / "catalog.marshal").is_file()

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cache should have answered")

    with monkeypatch.context() as patch:
        patch.setattr(catalog.entries.validate, "read_catalog", refuse)
        patch.setattr(catalog.gate.check, "_file_facts", refuse)
        patch.setattr(catalog.gate.check, "_sites_findings", refuse)
        assert _report(capsys) == cold

    bridge = copied / "runtime" / "tensor_bridge.py"
    bridge.write_text(
        bridge.read_text(encoding="utf-8") + "# errcat: ignore[nothing here]\n", encoding="utf-8"
    )
    code, _lines = _check(capsys)
    assert code == 1
    assert any("exemption [nothing here] matches no raise site" in line for line in _lines)

    yaml_path = copied / "catalog" / "errors" / "tensor_bridge.yaml"
    text = yaml_path.read_text(encoding="utf-8")
    yaml_path.write_text(text.replace("name: Complex128Unsupported", "name: Complex128Refused"))
    code, _lines = _check(capsys)
    # A rename: the module on disk still holds the old name, which migrate turns into the new.
    fix = "run: errcat migrate (it renames the raises and imports, then writes the module)"
    assert (
        "runtime/errors.py:1:1: the generated module is stale: it differs from what the catalog "
        f"generates; {fix}" in _lines
    )
    assert any(
        "was renamed Complex128Unsupported → Complex128Refused" in line and line.endswith(fix)
        for line in _lines
    )


def test_paths_are_shown_as_findings_show_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check command's shortcut for display paths agrees with Finding.display_path: inside
    and outside the current folder, through a symlinked folder and a symlinked file."""
    from catalog.cli.commands.check import _Shown
    from catalog.core.findings import Finding

    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "real" / "deep" / "a.py").write_text("", encoding="utf-8")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "linked").symlink_to(tmp_path / "real")
    (tmp_path / "work" / "b.py").symlink_to(tmp_path / "real" / "deep" / "a.py")
    (tmp_path / "work" / "c.py").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path / "work")
    shown = _Shown()
    for path in (
        tmp_path / "work" / "c.py",
        Path("c.py"),
        tmp_path / "work" / "linked" / "deep" / "a.py",
        tmp_path / "work" / "b.py",
        tmp_path / "real" / "deep" / "a.py",
        tmp_path / "work" / "missing" / "x.py",
        tmp_path / "work",
    ):
        finding = Finding(path, 1, 1, "m")
        assert shown(finding) == finding.display_path(), path


def test_json_report_is_what_print_findings_writes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The JSON the check command writes itself, byte for byte what print_findings writes."""
    from catalog.cli.commands.check import _print_json, _Shown
    from catalog.cli.commands.common import print_findings
    from catalog.core.findings import Finding, Severity

    findings = [
        Finding(project / "pkg" / "pool.py", 6, 9, 'a "quoted" message é', "run: errcat new"),
        Finding(Path("/elsewhere/x.yaml"), 2, 3, "warning\\n", None, Severity.WARNING, "drafts"),
    ]
    extra: dict[str, object] = {"entries": 2, "skipped": ["codegen: why"], "examples": None}
    for given in (findings, []):
        capsys.readouterr()
        print_findings(given, as_json=True, extra=extra)
        expected = capsys.readouterr().out
        _print_json(given, _Shown(), extra)
        assert capsys.readouterr().out == expected


def test_a_dunder_placeholder_is_refused(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`{__class__}` would make the generated class set its instance's class: a finding."""
    (project / "knowledge").mkdir()
    (project / "knowledge" / "pool.yaml").write_text(
        "module: pkg.pool\nerrors:\n"
        '  - id: "1234567890abcdef"\n    name: WrongKind\n    exception: TypeError\n'
        '    status: draft\n    message: "{__class__} is not allowed"\n',
        encoding="utf-8",
    )
    code, lines = _check(capsys)
    assert code == 1
    assert lines == [
        "knowledge/pool.yaml:7:14: placeholder {__class__} would shadow the exception's "
        "'__class__' attribute; rename the placeholder"
    ]


def _big_catalog(count: int) -> str:
    rows = "".join(
        f'  - id: "{index:016x}"\n    name: Case{index:04d}Error\n    exception: ValueError\n'
        f'    status: draft\n    message: "case {index}: {{value}}"\n'
        for index in range(count)
    )
    return f"module: pkg.pool\nerrors:\n{rows}"


def _codegen_findings(capsys: pytest.CaptureFixture[str]) -> list[str]:
    report = json.loads(_report(capsys)[1])
    return [
        f"{f['path']}:{f['line']}:{f['column']}: {f['message']}; {f['fix']}"
        for f in report["findings"]
        if f["stage"] == "codegen"
    ]


def test_the_table_forms_stub_is_drift_checked_and_removed_with_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A large catalog's module comes with a stub: check reports it missing or stale, codegen
    writes it; when the catalog shrinks to the written-out form, check reports the stub left
    behind and codegen removes it. A stub errcat did not write is never touched."""
    from catalog.authoring.codegen import TABLE_THRESHOLD

    (project / "knowledge").mkdir()
    catalog_file = project / "knowledge" / "pool.yaml"
    catalog_file.write_text(_big_catalog(TABLE_THRESHOLD + 1), encoding="utf-8")
    stub = project / "pkg" / "errors.pyi"
    capsys.readouterr()
    assert main(["codegen"]) == 0
    assert capsys.readouterr().out == (
        f"wrote pkg/errors.py, wrote pkg/errors.pyi ({TABLE_THRESHOLD + 1} classes)\n"
    )
    assert _codegen_findings(capsys) == []

    stub.unlink()
    assert _codegen_findings(capsys) == [
        "pkg/errors.pyi:1:1: the generated stub is missing; run: errcat codegen"
    ]
    assert main(["codegen", "--check"]) == 1
    assert "pkg/errors.pyi is stale; run: errcat codegen" in capsys.readouterr().err
    assert main(["codegen"]) == 0
    # A change of code (a comment alone, as a formatter might leave, is no change).
    stub.write_text(stub.read_text(encoding="utf-8") + "EDITED: int\n", encoding="utf-8")
    assert _codegen_findings(capsys) == [
        "pkg/errors.pyi:1:1: the generated stub is stale: it differs from what the catalog "
        "generates; run: errcat codegen"
    ]

    catalog_file.write_text(_big_catalog(3), encoding="utf-8")
    assert _codegen_findings(capsys) == [
        "pkg/errors.py:1:1: the generated module is stale: it differs from what the catalog "
        "generates; run: errcat codegen",
        "pkg/errors.pyi:1:1: the generated stub is left from an earlier, larger catalog; the "
        "module no longer has a stub; run: errcat codegen",
    ]
    capsys.readouterr()
    assert main(["codegen"]) == 0
    assert capsys.readouterr().out == "wrote pkg/errors.py, removed pkg/errors.pyi (3 classes)\n"
    assert not stub.exists() and _codegen_findings(capsys) == []

    stub.write_text("def helper() -> None: ...\n", encoding="utf-8")  # the project's own
    assert _codegen_findings(capsys) == []
    assert main(["codegen"]) == 0
    assert stub.read_text(encoding="utf-8") == "def helper() -> None: ...\n"


def test_the_loaders_validator_agrees_with_jsonschema() -> None:
    """The loader validates with jsonschema-rs; the pure-Python jsonschema is the oracle: on the
    bad-YAML corpus, this catalog and thousands of mutated entries, the two always agree, and
    so do the places and keywords of their errors."""
    import copy
    import random

    from jsonschema import Draft202012Validator

    from catalog.entries.loader import _schema_errors, file_schema, fits_schema
    from catalog.entries.yamlnodes import YamlProblem, parse_document

    validator = Draft202012Validator(file_schema())
    documents = []
    for folder in (ROOT / "tests" / "data" / "bad_yaml", ROOT / "catalog" / "errors"):
        for path in sorted(folder.glob("*.y*ml")):
            try:
                documents.append(parse_document(path.read_bytes().decode("utf-8-sig")).value)
            except (YamlProblem, UnicodeDecodeError):
                continue
    assert sum(map(validator.is_valid, documents)) >= 10
    values: list[object] = [None, True, 1, 1.5, "", "x", "draft", "active", "retired", [], ["a"]]
    values += [["a", "a"], {}, {"a": 1}, "0123456789abcdef", "Abc", "cuda", ["mps", "mps"]]
    values += ["x" * 20_001, ["x"] * 21]
    keys = ["id", "name", "exception", "message", "status", "meaning", "solutions", "example"]
    keys += ["trigger", "situations", "related", "retired_reason", "replaced_by", "since"]
    keys += ["bogus", "module", "errors", "before", "after", "requires"]
    valid = [d for d in documents if validator.is_valid(d) and isinstance(d, dict)]
    shuffle = random.Random(16)
    for _ in range(3000):
        document = copy.deepcopy(shuffle.choice(valid))
        entry = shuffle.choice(document["errors"])
        for _ in range(shuffle.randint(1, 3)):
            example = entry.get("example")
            target = shuffle.choice(
                [document, entry, example if isinstance(example, dict) else entry]
            )
            key = shuffle.choice(keys)
            if key in target and shuffle.random() < 0.3:
                del target[key]
            else:
                target[key] = copy.deepcopy(shuffle.choice(values))
        documents.append(document)
    for document in documents:
        assert fits_schema(document) == validator.is_valid(document), document
        expected = sorted(
            (tuple(e.absolute_path), e.validator) for e in validator.iter_errors(document)
        )
        assert sorted((e.path, e.keyword) for e in _schema_errors(document)) == expected, document
