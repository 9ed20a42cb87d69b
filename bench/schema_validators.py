"""Benchmark the JSON-Schema validation of a catalog: jsonschema-rs against plain jsonschema and
the evaluator errcat had written by hand.

    .venv/bin/python bench/schema_validators.py [--catalog DIR] [--rounds N] [--fast-path REV]

Parses every YAML file of `--catalog` (default: the whole-torch catalog drafted under
/tmp/torchwork/errors by `bench/commands_scale.py --work /tmp/torchwork`, else this
repository's catalog/errors) once, then times validating all of the parsed documents against
the committed schema, the median of `--rounds` (default 5), with:

- `jsonschema-rs`: `jsonschema_rs.validator_for(schema).is_valid`, the validator the loader
  uses (`catalog.entries.loader`);
- `jsonschema`: `Draft202012Validator(schema).iter_errors`, the pure-Python library, one
  validator built once over the schema with its `$ref`s inlined, as the loader built it (that
  halves its time against resolving the references);
- `fast path`: `fits_schema` of `catalog/entries/loader.py` as it was at git revision `--fast-path`
  (default a3a10a9, the last with the hand-written evaluator `_fits`), read with `git show`
  and loaded beside the current modules; skipped, saying why, outside a git checkout.

Each figure is printed with its ratio to plain jsonschema, measured in the same run, and the
three must agree on every document's validity (the run stops if they do not). YAML parsing is
not counted: it is the same for every validator.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from catalog.entries import loader  # noqa: E402
from catalog.entries.yamlnodes import YamlProblem, parse_document  # noqa: E402

TORCH_CATALOG = Path("/tmp/torchwork/errors")
FAST_PATH_REVISION = "a3a10a9"
"""The last commit whose loader had the hand-written evaluator."""


def _old_fits(revision: str) -> Callable[[Any], bool] | str:
    """`fits_schema` of the loader at `revision`, or why it cannot be had."""
    try:
        source = subprocess.run(
            ["git", "show", f"{revision}:catalog/entries/loader.py"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        return f"cannot read the loader at {revision}: {exc}"
    if "def _fits(" not in source:
        return f"the loader at {revision} has no hand-written evaluator"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "old_loader.py"
        path.write_text(source, encoding="utf-8")
        # A name inside catalog.entries, so that its dataclasses and relative lookups resolve.
        spec = importlib.util.spec_from_file_location("catalog.entries._bench_old_loader", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    module.SCHEMA_PATH = loader.SCHEMA_PATH  # it looked beside its own file
    fits: Callable[[Any], bool] = module.fits_schema
    return fits


def _documents(folder: Path) -> list[Any]:
    values = []
    for path in loader.catalog_files(folder):
        try:
            document = parse_document(path.read_text(encoding="utf-8-sig"), collect=True)
        except (UnicodeDecodeError, YamlProblem):
            continue  # the loader reports these before any schema check
        values.append(document.value)
    return values


def _inlined(node: Any, definitions: dict[str, Any]) -> Any:
    """`node` with every local `{"$ref": "#/$defs/<name>"}` replaced by that definition."""
    if isinstance(node, dict):
        reference = node.get("$ref")
        if len(node) == 1 and isinstance(reference, str) and reference.startswith("#/$defs/"):
            return _inlined(definitions[reference.removeprefix("#/$defs/")], definitions)
        return {key: _inlined(value, definitions) for key, value in node.items()}
    if isinstance(node, list):
        return [_inlined(item, definitions) for item in node]
    return node


def _median_seconds(check: Callable[[Any], bool], values: list[Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for value in values:
            check(value)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = TORCH_CATALOG if TORCH_CATALOG.is_dir() else ROOT / "catalog" / "errors"
    parser.add_argument("--catalog", type=Path, default=default, metavar="DIR")
    parser.add_argument("--rounds", type=int, default=5, metavar="N")
    parser.add_argument("--fast-path", default=FAST_PATH_REVISION, metavar="REV")
    args = parser.parse_args()

    import jsonschema_rs
    from jsonschema import Draft202012Validator

    schema = loader.file_schema()
    values = _documents(args.catalog)
    python = Draft202012Validator(_inlined(schema, schema.get("$defs", {})))
    rust = jsonschema_rs.validator_for(schema)
    validators: dict[str, Callable[[Any], bool]] = {
        "jsonschema-rs": rust.is_valid,
        "jsonschema": lambda value: next(python.iter_errors(value), None) is None,
    }
    fast = _old_fits(args.fast_path)
    if not isinstance(fast, str):
        # It decided only documents that fit; a False was then jsonschema's to word.
        validators["fast path"] = fast

    verdicts = {name: [check(value) for value in values] for name, check in validators.items()}
    if len({tuple(v) for v in verdicts.values()}) != 1:
        print("the validators disagree on some document's validity", file=sys.stderr)
        return 1
    invalid = verdicts["jsonschema"].count(False)
    print(
        f"{len(values)} documents from {args.catalog} ({invalid} invalid), median of "
        f"{args.rounds} rounds"
    )
    figures = {
        name: _median_seconds(check, values, args.rounds) for name, check in validators.items()
    }
    baseline = figures["jsonschema"]
    for name, seconds in figures.items():
        print(f"{name:>14}: {seconds * 1000:9.2f} ms  ({seconds / baseline:.3f} x jsonschema)")
    if isinstance(fast, str):
        print(f"     fast path: skipped: {fast}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
