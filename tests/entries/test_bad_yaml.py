"""Broken catalog files: each is refused with a positioned finding, never a traceback or a write.

Every file of `tests/data/bad_yaml/` (its first line says what is wrong, where the breakage leaves
room for a comment) is dropped next to a valid catalog file in a small project. `errcat check`
must exit 1 with a `path:line:col:` finding for that file that names the problem, and `errcat
codegen` must exit 1 without touching the generated module. `00_good_crlf.yaml` is the control:
a valid file with CRLF line endings, which must load.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from catalog.cli import main
from catalog.entries.loader import MAX_FILE_BYTES

CORPUS = Path(__file__).parents[1] / "data" / "bad_yaml"
CONTROL = "00_good_crlf.yaml"

PYPROJECT = """\
[tool.errcat]
package = "pkg"
catalog = "knowledge"
generated = "pkg/errors.py"
"""

MODULE = """\
from pkg.errors import PoolSizePositiveError


def open_pool(size):
    if size <= 0:
        raise PoolSizePositiveError(size=size)
    return size
"""

GOOD_CATALOG = """\
module: pkg.pool
errors:
  - id: 47afe9f0304f070c
    name: PoolSizePositiveError
    exception: ValueError
    status: draft
    message: "pool size must be positive, got {size}"
"""

# file → (line, column, fragment of the message) of the finding that names its problem.
EXPECTED: dict[str, tuple[int, int, str]] = {
    "01_syntax_unclosed_quote.yaml": (8, 14, "file ends inside a quoted scalar"),
    "02_syntax_unclosed_flow.yaml": (9, 14, "file ends inside a flow sequence"),
    "03_tab_indentation.yaml": (5, 1, "a tab character; indent YAML with spaces"),
    "04_bad_indentation.yaml": (6, 4, "YAML syntax: expected <block end>"),
    "05_duplicate_key.yaml": (9, 5, "duplicate key 'message' (first defined at line 8)"),
    "06_list_for_string.yaml": (8, 14, "errors[0].message must be string, got a list"),
    "07_int_id.yaml": (4, 9, "errors[0].id must be string, got an integer"),
    "08_bool_status.yaml": (7, 13, "errors[0].status must be string, got a boolean"),
    "09_string_for_list.yaml": (9, 16, "errors[0].solutions must be array, got a string"),
    "10_unknown_entry_key.yaml": (9, 5, "unknown key 'severity' in errors[0]"),
    "11_unknown_top_key.yaml": (2, 1, "unknown key 'version' in the file"),
    "12_missing_name.yaml": (4, 5, "errors[0] is missing required key 'name'"),
    "13_missing_errors.yaml": (2, 1, "the file is missing required key 'errors'"),
    "14_active_missing_prose.yaml": (
        4,
        5,
        "missing required key 'meaning' (required for status 'active')",
    ),
    "15_active_one_solution.yaml": (12, 7, "errors[0].solutions is too short (needs at least 2)"),
    "16_id_too_short.yaml": (4, 9, "16 lowercase hex digits, got 'abc123'"),
    "17_id_uppercase.yaml": (4, 9, "16 lowercase hex digits, got '0123456789ABCDEF'"),
    "18_duplicate_id.yaml": (9, 9, "duplicate id 0123456789abcdef (also 18_duplicate_id.yaml:4)"),
    "19_duplicate_name.yaml": (
        10,
        11,
        "duplicate name BrokenThing (also 19_duplicate_name.yaml:5)",
    ),
    "20_placeholder_empty.yaml": (
        8,
        14,
        "placeholder {} in 'thing {} broke' must be an identifier",
    ),
    "21_placeholder_index.yaml": (
        8,
        14,
        "placeholder {0} in 'thing {0} broke' must be an identifier",
    ),
    "22_placeholder_item.yaml": (8, 14, "placeholder {a[0]} in 'thing {a[0]} broke' must be an"),
    "23_placeholder_self.yaml": (
        8,
        14,
        "placeholder {self.x} in 'thing {self.x} broke' reads self",
    ),
    "24_placeholder_unbalanced.yaml": (8, 14, "malformed template 'thing {x broke'"),
    "25_placeholder_keyword.yaml": (
        8,
        14,
        "placeholder {class} in 'thing {class} broke' is a Python",
    ),
    "26_placeholder_nested_spec.yaml": (8, 14, "nests a field in its format spec"),
    "27_reserved_parameter.yaml": (8, 14, "placeholder {id} would shadow the exception's 'id'"),
    "28_unknown_related.yaml": (9, 15, "related id fedcba9876543210 is not in the catalog"),
    "29_unknown_replaced_by.yaml": (
        10,
        18,
        "replaced_by id fedcba9876543210 is not in the catalog",
    ),
    "30_replaced_by_not_retired.yaml": (9, 18, "replaced_by is set but the status is draft"),
    "31_retired_without_reason.yaml": (
        4,
        5,
        "missing required key 'retired_reason' (required for status 'retired')",
    ),
    "32_not_utf8.yaml": (8, 18, "not UTF-8: byte 0xe9 cannot be decoded"),
    "33_utf16_bom.yaml": (1, 1, "not UTF-8: the file starts with a UTF-16 byte order mark"),
    "34_message_too_long.yaml": (8, 14, "errors[0].message is too long (limit 2000)"),
    "35_billion_laughs.yaml": (3, 10, "aliases (*name) are not allowed"),
    "36_merge_key.yaml": (6, 5, "merge keys (<<) are not allowed"),
    "37_two_documents.yaml": (10, 1, "more than one YAML document"),
    "38_empty.yaml": (1, 1, "empty file"),
    "39_comment_only.yaml": (1, 1, "empty file"),
    "40_top_level_list.yaml": (2, 1, "the file must be object, got a list"),
    "41_top_level_scalar.yaml": (2, 1, "the file must be object, got a string"),
    "42_deep_flow_nesting.yaml": (3, 41, "nesting deeper than 32 levels"),
    "43_deep_block_nesting.yaml": (40, 67, "nesting deeper than 32 levels"),
    "44_python_tag.yaml": (9, 16, "tag !!python/object/apply:os.system is not allowed"),
    "45_nul_byte.yaml": (8, 24, "character U+0000 is not allowed"),
    "46_unknown_exception.yaml": (6, 16, "ValueErorr is not a built-in exception"),
    "47_lowercase_name.yaml": (5, 11, "must be a CapWords class name, got 'broken_thing'"),
    "48_bad_module_name.yaml": (2, 9, "module: 'pkg..broken' does not match"),
    "49_impossible_date.yaml": (9, 12, "YAML value '2024-13-45': month must be in 1..12"),
    "50_huge_integer.yaml": (9, 12, "Exceeds the limit (4300 digits)"),
    "51_lone_surrogate.yaml": (8, 14, "U+D800 is not printable text"),
    "52_terminal_escape.yaml": (8, 14, "U+001B is not printable text"),
    "53_non_string_key.yaml": (9, 5, "key 404 must be a string"),
    "54_unknown_status.yaml": (7, 13, "errors[0].status has value 'published'"),
    "55_reserved_class_name.yaml": (5, 11, "name CatalogError is reserved"),
    "56_related_to_itself.yaml": (9, 15, "entry 0123456789abcdef lists itself as related"),
    "57_include_tag.yaml": (9, 14, "tag !include is not allowed"),
    "58_builtins_prefix.yaml": (6, 16, "write the built-in as ValueError"),
    "59_null_message.yaml": (8, 13, "errors[0].message must be string, got nothing (null)"),
    "60_bad_requires.yaml": (14, 18, "errors[0].example.requires[0] has value 'gpu'"),
    "61_set_tag.yaml": (9, 16, "tag !!set is not allowed"),
    "62_entry_not_mapping.yaml": (4, 5, "errors[0] must be object, got a string"),
    "63_single_alias.yaml": (9, 14, "aliases (*name) are not allowed"),
}

BAD_FILES = sorted(p.name for p in CORPUS.glob("*.yaml") if p.name != CONTROL)

# Binary-level breakage leaves no room for a readable header comment.
NO_HEADER = {"32_not_utf8.yaml", "33_utf16_bom.yaml", "38_empty.yaml"}


def _project(root: Path) -> Path:
    """A project whose catalog is valid and whose generated module is current."""
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "pool.py").write_text(MODULE, encoding="utf-8")
    (root / "knowledge").mkdir()
    (root / "knowledge" / "pool.yaml").write_text(GOOD_CATALOG, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The generated module of the valid project, written once by `errcat codegen`."""
    root = _project(tmp_path_factory.mktemp("seed"))
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        assert main(["codegen"]) == 0
        assert main(["check"]) == 0  # the baseline is clean, so every failure below is the file's
    return (root / "pkg" / "errors.py").read_bytes()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated: bytes) -> Path:
    root = _project(tmp_path)
    (root / "pkg" / "errors.py").write_bytes(generated)
    monkeypatch.chdir(root)
    return root


def _findings(text: str, name: str) -> list[tuple[int, int, str]]:
    """(line, column, message) of each `knowledge/<name>:line:col: message` line of `text`."""
    pattern = re.compile(rf"^knowledge/{re.escape(name)}:(\d+):(\d+): (.*)$", re.MULTILINE)
    return [(int(m[1]), int(m[2]), m[3]) for m in pattern.finditer(text)]


def _assert_refused(
    project: Path,
    name: str,
    expected: tuple[int, int, str],
    generated: bytes,
    capsys: pytest.CaptureFixture[str],
) -> None:
    line, column, fragment = expected
    capsys.readouterr()
    assert main(["check"]) == 1
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    findings = _findings(out, name)
    assert findings, out
    assert any((ln, col) == (line, column) and fragment in msg for ln, col, msg in findings), (
        findings
    )
    # Every error line of the report is about the broken file: the rest of the project is valid.
    errors = [ln for ln in out.splitlines() if re.match(r"^\S+:\d+:\d+: (?!warning:)", ln)]
    assert all(ln.startswith(f"knowledge/{name}:") for ln in errors), errors

    assert main(["check", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert not report["ok"]
    assert {f["path"] for f in report["findings"]} == {f"knowledge/{name}"}

    assert main(["codegen"]) == 1
    out, err = capsys.readouterr()
    assert "nothing written" in err
    assert _findings(err, name)
    assert "Traceback" not in out + err
    assert (project / "pkg" / "errors.py").read_bytes() == generated


def test_corpus_is_complete() -> None:
    """The corpus has at least 30 broken files, each with an expectation, each saying what it is."""
    assert len(BAD_FILES) >= 30
    assert sorted(EXPECTED) == BAD_FILES
    for name in set(BAD_FILES) - NO_HEADER:
        first = (CORPUS / name).read_bytes().split(b"\n", 1)[0]
        assert first.startswith(b"# BAD: "), name


@pytest.mark.parametrize("name", BAD_FILES)
def test_bad_file_refused(
    name: str, project: Path, generated: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    """check and codegen exit 1 with the file's positioned finding; the module stays as it was."""
    (project / "knowledge" / name).write_bytes((CORPUS / name).read_bytes())
    _assert_refused(project, name, EXPECTED[name], generated, capsys)


def test_python_tag_never_runs(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The `!!python/object/apply:os.system` payload is refused, not executed."""
    name = "44_python_tag.yaml"
    (project / "knowledge" / name).write_bytes((CORPUS / name).read_bytes())
    assert main(["check"]) == 1
    assert main(["codegen"]) == 1
    assert not (project / "errcat-pwned").exists()


def test_oversized_file_refused(
    project: Path, generated: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file over the 1 MiB limit is refused at 1:1 before it is parsed."""
    name = "huge.yaml"
    padding = "      " + "x" * 99 + "\n"
    text = (
        "# BAD: over 1 MiB of prose.\nmodule: pkg.broken\nerrors:\n"
        "  - id: 0123456789abcdef\n    name: BrokenThing\n    exception: ValueError\n"
        '    status: draft\n    message: "thing {x} broke"\n    meaning: |\n'
        + padding
        * (MAX_FILE_BYTES // len(padding) + 1)
    )
    data = text.encode("utf-8")
    assert len(data) > MAX_FILE_BYTES
    (project / "knowledge" / name).write_bytes(data)
    EXPECTED[name] = (1, 1, f"file is {len(data):,} bytes; the limit is {MAX_FILE_BYTES:,}")
    try:
        _assert_refused(project, name, EXPECTED[name], generated, capsys)
    finally:
        del EXPECTED[name]


def test_crlf_control_loads(
    project: Path, generated: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    """A valid file saved with CRLF line endings loads: check passes and codegen changes nothing."""
    data = (CORPUS / CONTROL).read_bytes()
    assert data.count(b"\r\n") == data.count(b"\n") > 0
    (project / "knowledge" / "pool.yaml").write_bytes(data)
    capsys.readouterr()
    assert main(["check"]) == 0
    assert main(["codegen"]) == 0
    assert "is up to date (1 classes)" in capsys.readouterr().out
    assert (project / "pkg" / "errors.py").read_bytes() == generated


@pytest.mark.parametrize("name", ["01_syntax_unclosed_quote.yaml", "44_python_tag.yaml"])
def test_codegen_writes_no_module_from_bad_catalog(
    name: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where no generated module exists yet, a bad catalog leaves it absent."""
    (project / "pkg" / "errors.py").unlink()
    (project / "knowledge" / name).write_bytes((CORPUS / name).read_bytes())
    assert main(["codegen"]) == 1
    assert not (project / "pkg" / "errors.py").exists()
    assert sorted(p.name for p in (project / "pkg").iterdir()) == ["__init__.py", "pool.py"]


@pytest.mark.parametrize(
    "name",
    [
        "42_deep_flow_nesting.yaml",
        "44_python_tag.yaml",
        "45_nul_byte.yaml",
        "50_huge_integer.yaml",
        "51_lone_surrogate.yaml",
    ],
)
def test_no_traceback_in_a_real_process(name: str, project: Path) -> None:
    """Run as a process, check and codegen print findings and exit 1 with nothing on stderr but
    findings: no traceback reaches the terminal."""
    (project / "knowledge" / name).write_bytes((CORPUS / name).read_bytes())
    line, column, fragment = EXPECTED[name]
    for command, stream in (("check", "stdout"), ("codegen", "stderr")):
        done = subprocess.run(
            [sys.executable, "-m", "catalog", command],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 1, done
        assert "Traceback" not in done.stdout + done.stderr
        found = _findings(getattr(done, stream), name)
        assert any((ln, col) == (line, column) and fragment in m for ln, col, m in found), done
