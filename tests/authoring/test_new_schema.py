"""`errcat new` keeps errcat's catalog-file schema in the catalog folder, where the drafts'
`# yaml-language-server: $schema=schema.json` modeline points editors, and touches no file of
someone else's."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from catalog.authoring.drafting import _schema_update
from catalog.authoring.scaffold import SCHEMA_COMMENT
from catalog.cli import main
from catalog.entries.loader import SCHEMA_PATH

PYPROJECT = """\
[project]
name = "toy"
requires-python = ">=3.9"

[tool.errcat]
package = "toy"
catalog = "errors"
"""

CORE = """\
def take(n, pool):
    if n < 0:
        raise ValueError(f"cannot take a negative count, got {n}")
    if not pool:
        raise KeyError("the pool is empty")
    return pool[:n]
"""


def _toy(root: Path, core: str = CORE) -> Path:
    (root / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    (root / "toy").mkdir()
    (root / "toy" / "__init__.py").write_text("", encoding="utf-8")
    (root / "toy" / "core.py").write_text(core, encoding="utf-8")
    return root / "errors"


def _new(
    root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str, str]:
    monkeypatch.chdir(root)
    code = main(["new", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_new_writes_the_packaged_schema_and_the_drafts_validate_against_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """After `new` the catalog folder holds schema.json, byte for byte errcat's, a valid Draft
    2020-12 schema that the modeline of each draft file names and that each draft fits."""
    catalog = _toy(tmp_path)
    code, out, _ = _new(tmp_path, monkeypatch, capsys)
    assert code == 0
    assert "and the catalog schema to errors/schema.json" in out
    written = catalog / "schema.json"
    assert written.read_bytes() == SCHEMA_PATH.read_bytes()
    schema = json.loads(written.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)

    drafts = sorted(catalog.glob("*.yaml"))
    assert [path.name for path in drafts] == ["core.yaml"]
    text = drafts[0].read_text(encoding="utf-8")
    modeline = text.splitlines()[0]
    assert modeline + "\n" == SCHEMA_COMMENT
    # The modeline's path is relative to the YAML file, as the YAML language server reads it.
    assert (drafts[0].parent / modeline.partition("$schema=")[2]).resolve() == written.resolve()
    document = yaml.safe_load(text)
    assert len(document["errors"]) == 2
    jsonschema.validate(document, schema)
    # It is the real schema, not one that accepts anything: a misspelt key is refused.
    document["errors"][0]["meanin"] = "A typo."
    with pytest.raises(jsonschema.ValidationError, match="meanin"):
        jsonschema.validate(document, schema)


def test_a_later_new_brings_an_older_errcat_schema_up_to_date_and_leaves_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A schema.json of another errcat version (the same `$id`) is rewritten on the next run;
    the catalog files and any other file of the folder keep their bytes."""
    catalog = _toy(tmp_path)
    assert _new(tmp_path, monkeypatch, capsys)[0] == 0
    older = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    older["title"] = "errcat catalog file (an older version)"
    (catalog / "schema.json").write_text(json.dumps(older), encoding="utf-8")
    (catalog / "notes.json").write_text('{"mine": true}\n', encoding="utf-8")
    before = {path.name: path.read_bytes() for path in catalog.iterdir()}

    code, out, _ = _new(tmp_path, monkeypatch, capsys)
    assert code == 0
    assert "wrote 0 draft(s) to 0 file(s), and the catalog schema to errors/schema.json" in out
    after = {path.name: path.read_bytes() for path in catalog.iterdir()}
    assert after.pop("schema.json") == SCHEMA_PATH.read_bytes()
    before.pop("schema.json")
    assert after == before

    # Current now: a third run writes nothing at all.
    code, out, _ = _new(tmp_path, monkeypatch, capsys)
    assert code == 0
    assert out.splitlines()[0] == "errcat new: wrote 0 draft(s) to 0 file(s)"


def test_a_schema_json_of_someone_else_is_left_as_it_is_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A schema.json that is not errcat's (another `$id`, or not JSON) is never overwritten;
    `new` says so at the file and still writes the drafts."""
    catalog = _toy(tmp_path)
    catalog.mkdir()
    for foreign in ('{"$id": "https://example.org/their-schema.json"}\n', "not json at all\n"):
        (catalog / "schema.json").write_text(foreign, encoding="utf-8")
        code, _, err = _new(tmp_path, monkeypatch, capsys)
        assert code == 0
        assert (catalog / "schema.json").read_text(encoding="utf-8") == foreign
        assert (
            "errors/schema.json:1:1: warning: schema.json is not errcat's catalog schema (its "
            "$id is not https://errcat.invalid/schema/catalog-file.json); left as it is"
        ) in err
    assert (catalog / "core.yaml").is_file()


def test_dry_run_writes_no_schema_and_no_folder_is_made_for_it_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--dry-run` only names the schema it would write; a package with nothing to draft gets
    no catalog folder just to hold a schema."""
    catalog = _toy(tmp_path)
    code, out, _ = _new(tmp_path, monkeypatch, capsys, "--dry-run")
    assert code == 0
    assert "and the catalog schema for errors/schema.json (dry run; nothing written)" in out
    assert not catalog.exists()

    quiet = tmp_path / "quiet"
    quiet.mkdir()
    _toy(quiet, "def take(n):\n    return n\n")
    assert _new(quiet, monkeypatch, capsys)[0] == 0
    assert not (quiet / "errors").exists()


def test_errcats_own_catalog_folder_holds_the_packaged_schema_itself() -> None:
    """In this checkout the catalog folder is where the packaged schema lives: nothing to write."""
    yaml_file = next(SCHEMA_PATH.parent.glob("*.yaml"))
    assert _schema_update(SCHEMA_PATH.parent, {yaml_file: ""}, []) is None
