"""Scaffolding drafts and writing files: ids stay strings, modes stay sane."""

from __future__ import annotations

import os
import re
from pathlib import Path

from catalog.authoring.codegen import write_all_atomically, write_atomically
from catalog.authoring.scaffold import Draft, class_name, file_text
from catalog.entries.loader import load_bytes


def test_all_digit_id_stays_a_string(tmp_path: Path) -> None:
    """An id made only of decimal digits is quoted, so YAML does not read it as an integer."""
    draft = Draft(
        "8782179646755120",
        "ValueExceedsLimit",
        "ValueError",
        "value {value} exceeds {limit}",
        "pkg.m",
    )
    text = file_text(None, "pkg.m", [draft])
    loaded, problems = load_bytes(tmp_path / "m.yaml", text.encode())
    assert problems == []
    assert loaded is not None
    assert loaded.entries[0].id == "8782179646755120"


def test_appending_keeps_existing_text(tmp_path: Path) -> None:
    """Drafts are appended after what the author wrote, comments included."""
    existing = "# my notes\nmodule: pkg.m\nerrors: []\n"
    draft = Draft("0123456789abcdef", "Boom", "ValueError", "boom", "pkg.m")
    text = file_text(existing, "pkg.m", [draft])
    assert text.startswith("# my notes\nmodule: pkg.m\nerrors:\n  - id:")
    assert load_bytes(tmp_path / "m.yaml", text.encode())[1] == []


def test_class_names_are_unique() -> None:
    """Two messages whose words are the same get a numbered second name: nothing else tells
    them apart."""
    taken: set[str] = set()
    assert class_name("q must be contiguous", taken) == "ContiguousError"
    assert class_name("q must be contiguous!", taken) == "ContiguousError2"


def test_a_word_of_the_message_tells_two_names_apart_before_a_number() -> None:
    """Messages that share their first six naming words differ by a later one, and the second
    name carries that word instead of a `2`."""
    taken: set[str] = set()
    first = class_name("cannot convert input tensor of module to float16 on cpu", taken)
    second = class_name("cannot convert input tensor of module to float16 on cuda", taken)
    assert first == "CannotConvertInputTensorModuleFloat16Error"
    assert second == "CannotConvertInputTensorModuleFloat16CudaError"


def test_a_value_where_the_other_message_has_the_word_is_told_apart_by_literal_words() -> None:
    """`unknown parameter name` and `unknown parameter '{name}'` read the same words once the
    placeholder reads as its name: the second is named by the message's own words instead of
    a number (whichever comes first keeps the fuller name)."""
    taken: set[str] = set()
    assert class_name("unknown parameter name", taken) == "UnknownParameterNameError"
    assert class_name("unknown parameter '{name}'", taken) == "UnknownParameterError"
    other: set[str] = set()
    assert class_name("unknown parameter '{name}'", other) == "UnknownParameterNameError"
    assert class_name("unknown parameter name", other) == "UnknownParameterNameError2"


def test_names_of_real_messages_say_what_the_message_says() -> None:
    """Messages of the shapes real packages raise (validation libraries, parsers, date and
    version parsing, array libraries): negations kept, word order kept, no single letters or
    placeholder fragments, no number where a word differs."""
    cases = {
        "Field name {name} does not exist.": "FieldNameDoesNotExistError",
        "Not a valid ISO8601-formatted datetime string.": (
            "NotValidISO8601FormattedDatetimeStringError"
        ),
        "Slice assignment is not supported": "SliceAssignmentNotSupportedError",
        "Should not have entered parse_quoted_key()": "NotHaveEnteredParseQuotedKeyError",
        "Can't add a table to a dotted key": "CannotAddTableDottedKeyError",
        "Expected array, got {v}": "ExpectedArrayError",
        "Key {k!r} already exists.": "KeyAlreadyExistsError",
        "Invalid version: {version!r}": "InvalidVersionError",
        "unknown string format: {s}": "UnknownStringFormatError",
        "Expected end of text, found {found!r}": "ExpectedEndTextError",
        "Signature {sig!r} does not match": "SignatureSigDoesNotMatchError",
        "no template named {name!r} in {loader}": "NoTemplateNamedNameLoaderError",
        "x and y must have the same length": "HaveSameLengthError",
    }
    taken: set[str] = set()
    names = {message: class_name(message, taken) for message in cases}
    assert names == cases
    for name in names.values():
        # A lone capital starting a word (`QContiguous`, `ArrayVError`, `TAddTable`) is a
        # single letter; acronyms (`ISO8601`) are runs of capitals.
        assert not re.search(r"(?<![A-Z])[A-Z](?=[A-Z][a-z])", name), name
        assert not name.removesuffix("Error")[-1:].isdigit(), name


def test_written_files_follow_the_umask(tmp_path: Path) -> None:
    """A new file gets the umask's mode (not mkstemp's 0600); a replaced file keeps its mode."""
    umask = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh.py"
        write_atomically(fresh, "x = 1\n")
        assert fresh.stat().st_mode & 0o777 == 0o644
        kept = tmp_path / "kept.py"
        kept.write_text("old\n")
        kept.chmod(0o640)
        write_all_atomically({kept: "new\n", tmp_path / "other.py": "y = 2\n"})
        assert kept.read_text() == "new\n"
        assert kept.stat().st_mode & 0o777 == 0o640
        assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    finally:
        os.umask(umask)


def test_names_keep_negations_and_spell_out_contractions() -> None:
    """A name must not say the opposite of its message, nor keep a contraction's stray `t`."""
    taken: set[str] = set()
    names = {
        message: class_name(message, taken)
        for message in (
            "field name {name} does not exist",
            "slice assignment is not supported",
            "Not a valid integer",
            "no such file {path}",
            "Can't add a table to a dotted key",
            "the key doesn\u2019t match",
            "won't fit",
        )
    }
    assert names == {
        "field name {name} does not exist": "FieldNameDoesNotExistError",
        "slice assignment is not supported": "SliceAssignmentNotSupportedError",
        "Not a valid integer": "NotValidIntegerError",
        "no such file {path}": "NoSuchFilePathError",
        "Can't add a table to a dotted key": "CannotAddTableDottedKeyError",
        "the key doesn\u2019t match": "KeyDoesNotMatchError",
        "won't fit": "WillNotFitError",
    }


def test_a_private_class_is_named_by_its_words() -> None:
    """A message with no word of its own, raised as a private class (`raise _StopIteration`,
    `raise _Upgrade(session)`), is named after the class without its underscore: a CapWords
    name the catalog accepts."""
    taken: set[str] = set()
    assert class_name("", taken, "pkg.concurrency._StopIteration") == "BareStopIterationError"
    assert class_name("{session}", taken, "pkg.client._Upgrade") == "UpgradeSessionError"
    assert class_name("", taken, "pkg._") == "BareUnnamedError"
