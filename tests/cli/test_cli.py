"""The command line's frame: version, help and exit codes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from catalog import __version__
from catalog.cli import Terminated, _terminate_raises, main


def test_version_prints_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    """`errcat --version` prints the installed version and exits 0."""
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"errcat {__version__}"


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    """`errcat --help` describes the tool and exits 0."""
    assert main(["--help"]) == 0
    assert "usage: errcat" in capsys.readouterr().out


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Running errcat without a command prints help to stderr and exits 2."""
    assert main([]) == 2
    assert "usage: errcat" in capsys.readouterr().err


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown command is reported, not a traceback, with exit 2."""
    assert main(["no-such-command"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_console_script_entry_point() -> None:
    """`python -m catalog --version` runs the same main()."""
    done = subprocess.run(
        [sys.executable, "-m", "catalog", "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("errcat ")


def test_closed_pipe_is_quiet() -> None:
    """A reader that stops early (`| head -1`) ends errcat quietly, without a traceback."""
    import torch

    script = Path(sys.executable).with_name("errcat")
    # Far more output than a pipe buffer holds, so errcat is still writing when head exits.
    folder = Path(torch.__file__).parent / "nn"
    done = subprocess.run(
        f"set -o pipefail; {script} scan --no-cache {folder} | head -1",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 141, done.stderr
    assert done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_scan_leaves_out_the_generated_module_as_every_command_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The generated module's own raises (attribute lookup of a large catalog's module) are
    not the package's: `errcat scan` skips the module, as check, stats and the build do."""
    import contextlib

    from helpers import write_files

    write_files(
        tmp_path,
        {
            "pyproject.toml": '[tool.errcat]\npackage = "pkg"\ngenerated = "pkg/errors.py"\n',
            "pkg/__init__.py": "",
            "pkg/core.py": 'def f():\n    raise ValueError("the package\'s own")\n',
            "pkg/errors.py": "def __getattr__(name):\n    raise AttributeError(name)\n",
        },
    )
    with contextlib.chdir(tmp_path):
        assert main(["scan"]) == 0
    out = capsys.readouterr().out
    assert "pkg/core.py" in out and "pkg/errors.py" not in out
    assert out.rstrip().splitlines()[-1] == "2 files: 2 ok, 0 failed; 1 raise site"


def test_scan_lists_raise_statements_only_though_helper_calls_are_sites(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A raise helper's calls are sites for new, check and explain (each gets its entry), but
    `errcat scan --json` lists raise statements, each with its entry, as the contract says."""
    import contextlib
    import json

    from helpers import write_files

    write_files(
        tmp_path,
        {
            "pyproject.toml": '[tool.errcat]\npackage = "pkg"\ngenerated = false\n',
            "pkg/__init__.py": "",
            "pkg/core.py": (
                "def fail(message):\n"
                "    raise ValueError(message)\n\n\n"
                "def spin(speed):\n"
                "    if speed < 0:\n"
                '        fail("cannot spin backwards")\n'
            ),
        },
    )
    with contextlib.chdir(tmp_path):
        assert main(["new"]) == 0
        capsys.readouterr()
        assert main(["scan", "--json"]) == 0
        listed = json.loads(capsys.readouterr().out)["sites"]
        assert main(["explain", "--json", "cannot spin backwards"]) == 0
        first = json.loads(capsys.readouterr().out)["matches"][0]
    assert [site["line"] for site in listed] == [2]
    assert listed[0]["entry"] is not None
    assert first["message"] == "cannot spin backwards" and first["id"] != listed[0]["entry"]


@pytest.mark.parametrize(
    ("stop", "stopped"), [(signal.SIGTERM, Terminated), (signal.SIGINT, KeyboardInterrupt)]
)
def test_a_stop_dropped_in_a_finalizer_is_raised_again(
    stop: signal.Signals, stopped: type[BaseException]
) -> None:
    """A signal handled while a `__del__` runs raises there, where Python prints and drops
    the exception (a build was seen going on to publish after SIGTERM landed in an import
    lock's cleanup); `build` must still stop, so the signal is sent again and raised where the
    command unwinds."""
    dropped: list[BaseException] = []

    class Finalized:
        def __del__(self) -> None:
            try:
                os.kill(os.getpid(), stop)
                for _ in range(10**8):  # the handler runs at one of the checks in here
                    pass
            except BaseException as exc:
                dropped.append(exc)
                raise

    interrupting = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(stopped), _terminate_raises("build"):
            Finalized()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # the signal sent again ends this loop
                pass
            pytest.fail("the dropped stop was not raised again")
    finally:
        signal.signal(signal.SIGINT, interrupting)
    assert [type(exc) for exc in dropped] == [stopped]
