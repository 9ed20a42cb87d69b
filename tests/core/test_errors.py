"""`ErrcatError`: every failure errcat reports carries its exit code on its class, and the
command line maps an escaping one to that code in one place."""

from __future__ import annotations

import argparse

import pytest

from catalog.authoring.generated_path import GeneratedPathRefused
from catalog.authoring.migrate import MigrateError
from catalog.cli import main
from catalog.cli.commands.explain import InputProblem
from catalog.cli.commands.init import AlreadyConfigured, InitError
from catalog.core.config import ConfigError
from catalog.core.errors import (
    EXIT_FINDINGS,
    EXIT_USAGE,
    CatalogUnusable,
    ErrcatError,
    FindingsError,
    report,
)
from catalog.core.findings import CatalogInvalid
from catalog.core.placeholders import PlaceholderError
from catalog.core.worker_process import WorkerFailed
from catalog.entries.yamlnodes import YamlProblem
from catalog.serve.site import SiteError
from extractor.files import ExtractorError, PathError
from extractor.locate import DecodeProblem


@pytest.mark.parametrize(
    ("failure", "code"),
    [
        (ConfigError, EXIT_USAGE),
        (GeneratedPathRefused, EXIT_USAGE),
        (WorkerFailed, EXIT_USAGE),
        (SiteError, EXIT_USAGE),
        (InitError, EXIT_USAGE),
        (CatalogUnusable, EXIT_USAGE),
        (AlreadyConfigured, EXIT_FINDINGS),
        (CatalogInvalid, EXIT_FINDINGS),
        (PlaceholderError, EXIT_FINDINGS),
        (MigrateError, EXIT_FINDINGS),
        (YamlProblem, EXIT_FINDINGS),
        (InputProblem, EXIT_FINDINGS),
        (PathError, EXIT_USAGE),
        (DecodeProblem, EXIT_FINDINGS),
    ],
)
def test_each_failure_s_class_says_its_exit_code(failure: type[Exception], code: int) -> None:
    assert issubclass(failure, ErrcatError | ExtractorError)
    assert failure.exit_code == code  # type: ignore[attr-defined]


def test_findings_errors_end_with_the_findings_code() -> None:
    assert FindingsError.exit_code == EXIT_FINDINGS and ErrcatError.exit_code == EXIT_USAGE


def test_a_placeholder_error_is_still_a_value_error() -> None:
    assert issubclass(PlaceholderError, ValueError)


def test_report_names_the_command_but_not_for_the_configuration() -> None:
    assert report(SiteError("no site"), "serve") == "errcat serve: no site"
    assert report(PathError("gone.py"), "scan") == "errcat scan: gone.py: no such file or folder"
    assert report(ConfigError("bad table"), "check") == "errcat: bad table"
    assert str(CatalogUnusable(3)) == "the catalog has 3 problem(s); run: errcat check"


def test_main_maps_an_escaping_failure_to_its_class_s_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No command catches its own failures to choose a code: main does, from the class."""
    from catalog.cli.commands import stats

    for failure, code in ((CatalogUnusable(2), EXIT_USAGE), (MigrateError("x"), EXIT_FINDINGS)):

        def raising(args: argparse.Namespace, failure: Exception = failure) -> int:
            raise failure

        monkeypatch.setattr(stats, "run", raising)
        monkeypatch.setattr("catalog.cli._project_problem", lambda args: None)
        assert main(["stats"]) == code
        assert capsys.readouterr().err == f"errcat stats: {failure}\n"
