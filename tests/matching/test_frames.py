"""A pasted traceback's raise site: the frame read from it, the anchor of that site on the
entry's page, and the same rule in the browser's matcher (errcat-match.js, under Node)."""

from __future__ import annotations

import json
import subprocess

import pytest
from test_match_index import NODE, SCRIPT, needs_node

from catalog.matching.frames import package_path, raised_at, source_anchor

TRACEBACK = """\
Traceback (most recent call last):
  File "/home/me/train.py", line 12, in <module>
    opt = torch.optim.Adam(model.parameters(), lr=-1)
  File "/usr/lib/python3.11/site-packages/torch/optim/adam.py", line 59, in __init__
    raise ValueError(f"Invalid learning rate: {lr}")
ValueError: Invalid learning rate: -1
"""

CASES = [
    # (text, module, anchor)
    (TRACEBACK, "torch.optim.adam", "at-torch-optim-adam-py-59"),
    # A search box drops the line breaks of a paste: the frame is still read.
    (TRACEBACK.replace("\n", ""), "torch.optim", "at-torch-optim-adam-py-59"),
    # The innermost frame in the package wins over outer ones in it.
    (
        'File "/v/lib/torch/nn/modules/module.py", line 1736, in _call_impl\n'
        'File "/v/lib/torch/nn/modules/conv.py", line 549, in forward\n'
        "RuntimeError: boom",
        "torch.nn",
        "at-torch-nn-modules-conv-py-549",
    ),
    # A frame of another package after the package's own is passed over.
    (
        'File "/v/torch/serialization.py", line 9, in load\n'
        'File "/v/pickle.py", line 3, in load\nKeyError: x',
        "torch",
        "at-torch-serialization-py-9",
    ),
    # Windows paths, and a folder of the same name higher up (the last one counts).
    (
        'File "C:\\torch\\venv\\Lib\\torch\\jit\\_trace.py", line 7',
        "torch",
        "at-torch-jit-trace-py-7",
    ),
    # No frame in the package: no anchor.
    ('File "/home/me/train.py", line 12, in <module>', "torch", None),
    ("ValueError: Invalid learning rate: -1", "torch", None),
]


CHECK = """\
Traceback (most recent call last):
  File "/home/me/run.py", line 3, in <module>
    torch.unravel_index(torch.tensor([1.5]), (2, 2))
  File "/v/site-packages/torch/functional.py", line 2016, in unravel_index
    torch._check_type(
  File "/v/site-packages/torch/__init__.py", line 1795, in _check_type
    _check_with(TypeError, cond, message)
  File "/v/site-packages/torch/__init__.py", line 1750, in _check_with
    raise error_type(message_evaluated)
TypeError: expected 'indices' to be integer dtype, but got torch.float32
"""

CALL_CASES = [
    # (text, module, the entry's sources that call a raise helper, anchor)
    # The helper's own raise is innermost; the frame that called it is the entry's source.
    (
        CHECK,
        "torch.functional",
        ["at-torch-functional-py-2016", "at-torch-functional-py-2023"],
        "at-torch-functional-py-2016",
    ),
    # With its line breaks gone, as the search box has it.
    (
        CHECK.replace("\n", ""),
        "torch.functional",
        ["at-torch-functional-py-2016"],
        "at-torch-functional-py-2016",
    ),
    # No frame is one of them: the innermost frame in the package, as for any raise.
    (CHECK, "torch.functional", ["at-torch-functional-py-9"], "at-torch-init-py-1750"),
    (CHECK, "torch.functional", [], "at-torch-init-py-1750"),
]


@pytest.mark.parametrize(("text", "module", "anchor"), CASES)
def test_the_innermost_frame_in_the_package_gives_the_anchor(
    text: str, module: str, anchor: str | None
) -> None:
    assert raised_at(text, module) == anchor


@pytest.mark.parametrize(("text", "module", "calls", "anchor"), CALL_CASES)
def test_a_helpers_error_links_to_the_call_that_raised_it(
    text: str, module: str, calls: list[str], anchor: str
) -> None:
    assert raised_at(text, module, calls) == anchor


def test_installed_checked_out_and_catalogued_paths_give_one_anchor() -> None:
    """A page's source path (as the project holds it, src layout included) and the path a
    traceback prints for the installed file anchor the same place."""
    for path in (
        "toyshop/shop.py",
        "src/toyshop/shop.py",
        "/opt/venv/lib/python3.9/site-packages/toyshop/shop.py",
        "C:\\venv\\Lib\\site-packages\\toyshop\\shop.py",
    ):
        assert package_path(path, "toyshop") == "toyshop/shop.py", path
        assert source_anchor(path, 40, "toyshop.shop") == "at-toyshop-shop-py-40", path
    # The file's own name is never taken for the package's folder.
    assert package_path("lib/toyshop", "toyshop") is None


@needs_node
def test_the_browser_reads_frames_by_the_same_rule() -> None:
    runner = """
const m = require(process.argv[1]);
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(cases.map(([text, module, calls]) => m.raisedAt(text, module, calls))));
"""
    assert NODE is not None
    cases = [(text, module, None, anchor) for text, module, anchor in CASES] + CALL_CASES
    done = subprocess.run(
        [NODE, "-e", runner, str(SCRIPT)],
        input=json.dumps([[text, module, calls] for text, module, calls, _ in cases]),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [anchor for _text, _module, _calls, anchor in cases]
