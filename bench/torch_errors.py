"""Real torch errors pasted as users paste them: where `explain`, `/api/match` and the search box
rank the entry of the raise that gave each, and whether its page says something.

Each of `CALLS` is a call of torch's public API made wrongly (a negative learning rate, strided
`padding='same'`, a dotted buffer name, ...). They run in one child process on the installed
torch (the CPU build this checkout's `make setup` installs), which records for each the exact
`str(exc)`, the traceback's last line (`ValueError: Invalid learning rate: -1`, what users
copy) and the traceback's frames in torch. The entry a call's error belongs to is the one whose
catalogued raise site is the innermost torch frame's line (the `raise` line), read from the
built site's API files; a call whose innermost torch frame is no
catalogued raise (torch's C++ raised it) is listed apart and not ranked.

Each error is then asked, as its message alone and as the traceback's last line, of:

- `errcat explain --json QUERY` in the project (a subprocess per query);
- `GET /api/match?message=QUERY` of `errcat serve --port 0` on the built site;
- the search box's matcher (`catalog/pages/theme/assets/errcat-match.js`, under Node) over the
  site's own `search/errcat-match.json`,

and the rank of the entry (1 is first; `-` when not listed) is printed, with the kinds of
knowledge its API file carries. Exit 0 when every ranked error is first in every route and
every one of their pages carries knowledge; 1 otherwise.

    .venv/bin/python bench/torch_errors.py --project DIR

`DIR` is a whole-torch project built by `bench/knowledge.py --torch --keep DIR` (its
`DIR/torch-project`); without `--project` one is made that way in a temporary folder first
(`new` and `build`, about 2 minutes).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ERRCAT = Path(sys.executable).parent / "errcat"
MATCHER = ROOT / "catalog" / "pages" / "theme" / "assets" / "errcat-match.js"

CALLS = [
    "torch.optim.Adam([torch.zeros(1, requires_grad=True)], lr=-1)",
    "torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=-1)",
    "torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, weight_decay=-1)",
    "torch.optim.AdamW([torch.zeros(1, requires_grad=True)], betas=(1.5, 0.9))",
    "torch.optim.Adam([torch.zeros(1, requires_grad=True)], eps=-1)",
    "torch.optim.RMSprop([torch.zeros(1, requires_grad=True)], alpha=-1)",
    "torch.optim.Adagrad([torch.zeros(1, requires_grad=True)], lr_decay=-1)",
    "torch.optim.SGD([], lr=0.1)",
    "torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, nesterov=True)",
    "torch.optim.lr_scheduler.StepLR(object(), step_size=1)",
    "torch.nn.Conv2d(3, 3, 3, stride=2, padding='same')",
    "torch.nn.Conv2d(3, 3, 3, padding='middle')",
    "torch.nn.Conv2d(3, 4, 3, groups=2)",
    "torch.nn.Conv2d(3, 3, 3, padding_mode='mirror')",
    "torch.nn.Dropout(p=2)",
    "torch.nn.MultiheadAttention(5, 2)",
    "torch.nn.Linear(2, 2).load_state_dict({})",
    "torch.nn.Module().register_buffer('a.b', None)",
    "torch.nn.Module().register_buffer('', None)",
    "torch.nn.Module().register_parameter('a.b', None)",
    "torch.nn.Module().add_module('a.b', torch.nn.Linear(1, 1))",
    "torch.nn.Module().register_buffer('x', 3)",
    "torch.nn.Module().get_submodule('missing')",
    "torch.nn.Sequential(torch.nn.Linear(1, 1))[5]",
    "torch.nn.functional.interpolate(torch.zeros(1, 1, 4, 4), size=2, scale_factor=2)",
    "torch.nn.functional.interpolate(torch.zeros(1, 1, 4, 4))",
    "torch.nn.functional.interpolate(torch.zeros(1, 1, 4, 4), size=2, mode='linear')",
    "torch.nn.functional.dropout(torch.zeros(2), p=3)",
    "torch.nn.init.kaiming_uniform_(torch.zeros(2, 2), nonlinearity='nope')",
    "torch.nn.init.xavier_uniform_(torch.zeros(2))",
    "torch.nn.init.orthogonal_(torch.zeros(2))",
    "torch.nn.init.sparse_(torch.zeros(2, 2, 2), 0.5)",
    "torch.distributions.Normal(0.0, -1.0)",
    "torch.distributions.Bernoulli(probs=0.5, logits=0.0)",
    "torch.utils.data.DataLoader(list(range(3)), sampler=[0, 1], shuffle=True)",
    "torch.utils.data.DataLoader(list(range(3)), batch_size=2, batch_sampler=[[0]])",
    "torch.utils.data.DataLoader(list(range(3)), num_workers=-1)",
    "torch.utils.data.DataLoader(list(range(3)), prefetch_factor=2)",
    "torch.utils.data.random_split(list(range(3)), [2, 2])",
    "torch.utils.data.DistributedSampler(list(range(3)), num_replicas=2, rank=5)",
    "torch.utils.data.BatchSampler([0, 1], batch_size=0, drop_last=False)",
    "torch.utils.data.RandomSampler([0, 1], num_samples=0)",
    "torch.utils.checkpoint.checkpoint(lambda x: x, torch.zeros(1), use_reentrant=True, bogus=1)",
    "torch.zeros(2, requires_grad=True).backward()",
    "torch.autograd.functional.jacobian(lambda x: x, torch.zeros(1), strategy='sideways')",
    "torch.fx.symbolic_trace(42)",
    "torch.func.vmap(lambda x: x, chunk_size=0)(torch.zeros(2))",
    # Raised inside what torch.func's transforms return, and through torch._check helpers.
    "torch.func.vmap(lambda x: x, in_dims=(0, 0))(torch.zeros(2))",
    "torch.func.vmap(lambda x: x, in_dims='x')(torch.zeros(2))",
    "torch.func.vmap(lambda x: x, randomness='sometimes')(torch.zeros(2))",
    "torch.func.vmap(lambda x: x, out_dims='x')(torch.zeros(2))",
    "torch.func.jacrev(lambda x: x, argnums=())(torch.zeros(2))",
    "torch.func.grad(lambda x: x.sum(), argnums=(0, 0))(torch.zeros(2))",
    "torch.func.grad(lambda x: x)(torch.zeros(2))",
    "torch.func.jacfwd(lambda x: x, randomness='x')(torch.zeros(2))",
    "torch.func.hessian(lambda x: x.sum(), argnums=())(torch.zeros(2))",
    "torch.func.functional_call(torch.nn.Linear(1, 1), ({'a': 1}, {'a': 2}), (torch.zeros(1),))",
    "torch.unravel_index(torch.tensor([1.5]), (2, 2))",
    "torch.unravel_index(torch.tensor([1]), (-2, 2))",
    "torch.export.Dim('x', min=5, max=2)",
    "torch.hub.load('nope/nope', 'x', source='nowhere')",
    "torch.zeros(2).register_hook(lambda g: g)",
    "torch.nn.LSTM(2, 2, num_layers=0)",
    "torch.nn.RNN(2, 2, nonlinearity='relu6')",
    "torch.nn.LSTM(2, 2, proj_size=3)",
    "torch.nn.Embedding(3, 2, padding_idx=5)",
    "torch.nn.Embedding.from_pretrained(torch.zeros(3))",
    "torch.nn.TransformerEncoderLayer(d_model=4, nhead=2, activation='swish')",
    "torch.nn.Softmax2d()(torch.zeros(2))",
    "torch.nn.GroupNorm(3, 4)",
    "torch.nn.CrossEntropyLoss(reduction='avg')(torch.zeros(2, 3), torch.tensor([0, 1]))",
    "torch.nn.functional.binary_cross_entropy(torch.zeros(2), torch.zeros(3))",
    "torch.nn.functional.grid_sample(torch.zeros(1, 1, 2, 2), torch.zeros(1, 2, 2, 2), mode='cubic')",
    "torch.nn.functional.affine_grid(torch.zeros(1, 2, 3), [1, 1, 2])",
    "torch.nn.functional.multi_head_attention_forward(torch.zeros(2, 1, 4), torch.zeros(2, 1, 4), "
    "torch.zeros(2, 1, 4), 4, 3, torch.zeros(12, 4), torch.zeros(12), None, None, False, 0.0, "
    "torch.zeros(4, 4), torch.zeros(4))",
]

# The child: runs each call, records what it raised and the traceback's frames in torch.
CHILD = """
import json, os, sys, traceback, warnings
warnings.simplefilter("ignore")
import torch
top = os.path.dirname(os.path.dirname(torch.__file__))
found = []
for call in json.load(sys.stdin):
    try:
        eval(call, {"torch": torch})
    except Exception as exc:
        frames = [
            (os.path.relpath(f.filename, top), f.lineno)
            for f in traceback.extract_tb(exc.__traceback__)
            if f.filename.startswith(os.path.dirname(torch.__file__))
        ]
        last = traceback.format_exception_only(type(exc), exc)[-1].rstrip("\\n")
        found.append({"call": call, "message": str(exc), "last": last, "frames": frames})
    else:
        found.append({"call": call, "message": None, "last": None, "frames": []})
json.dump(found, sys.stdout)
"""


def raised() -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=json.dumps(CALLS),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found


def entries(site: Path) -> tuple[dict[str, list[tuple[int, str]]], dict[str, dict[str, Any]]]:
    """Catalogued raise lines by file, and every entry's API file, from the built site."""
    by_file: dict[str, list[tuple[int, str]]] = {}
    files: dict[str, dict[str, Any]] = {}
    for path in (site / "api" / "errors").glob("*.json"):
        if path.name == "index.json":
            continue
        entry = json.loads(path.read_text(encoding="utf-8"))
        files[entry["id"]] = entry
        for source in entry.get("sources") or ():
            by_file.setdefault(source["path"], []).append((source["line"], entry["id"]))
    for rows in by_file.values():
        rows.sort()
    return by_file, files


def owner(
    frames: list[list[Any]], by_file: dict[str, list[tuple[int, str]]], calls: dict[str, str]
) -> str | None:
    """The entry whose raise is the innermost torch frame's line (a traceback gives a `raise`
    written over several lines by its first line), or else whose raise helper's call is the
    innermost frame that is one (`calls`: the site index's call anchors, by anchor; the
    helper's own raise is the innermost frame of what it raises), or None: a line that only
    calls into torch's C++ is no raise of the catalog."""
    if not frames:
        return None
    path, line = frames[-1]
    found = next((entry_id for start, entry_id in by_file.get(path, ()) if start == line), None)
    if found is not None:
        return found
    from catalog.matching.frames import source_anchor

    for path, line in reversed(frames):
        anchor = source_anchor(path, line, "torch")
        if anchor in calls:
            return calls[anchor]
    return None


def helper_calls(site: Path) -> dict[str, str]:
    """Entry id by the anchor of each of its sources that calls a raise helper."""
    from catalog.matching.browser_index import helper_calls as calls_by_entry

    return {
        anchor: entry_id for entry_id, anchors in calls_by_entry(site).items() for anchor in anchors
    }


def rank(ids: list[str], wanted: str) -> int | None:
    return ids.index(wanted) + 1 if wanted in ids else None


def explain(project: Path, query: str) -> list[str]:
    done = subprocess.run(
        [str(ERRCAT), "explain", "--json", query],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode not in (0, 1) or not done.stdout.strip():
        return []
    return [match["id"] for match in json.loads(done.stdout)["matches"]]


class Server:
    """`errcat serve --port 0` on the project's built site, for the time of the run."""

    def __init__(self, project: Path) -> None:
        self.process = subprocess.Popen(
            [str(ERRCAT), "serve", "--port", "0"],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.process.stdout is not None
        self.base = ""
        for line in self.process.stdout:
            if "http://" in line:
                self.base = line[line.index("http://") :].split()[0].rstrip("/")
                break
        if not self.base:
            raise SystemExit("errcat serve printed no address")

    def match(self, query: str) -> list[str]:
        url = f"{self.base}/api/match?message={urllib.parse.quote(query)}"
        with urllib.request.urlopen(url, timeout=60) as answer:
            return [match["id"] for match in json.load(answer)["matches"]]

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def search_box(site: Path, queries: list[str]) -> list[list[str]]:
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not installed: the search box's matcher runs under it")
    runner = (
        "const { Matcher } = require(process.argv[1]);"
        "const index = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));"
        "const queries = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
        "const matcher = new Matcher(index);"
        "console.log(JSON.stringify(queries.map((q) => matcher.match(q).map((r) => r.id))));"
    )
    done = subprocess.run(
        [node, "-e", runner, str(MATCHER), str(site / "search" / "errcat-match.json")],
        input=json.dumps(queries),
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    found: list[list[str]] = json.loads(done.stdout)
    return found


def built_project(into: Path) -> Path:
    sys.path.insert(0, str(ROOT / "bench"))
    from knowledge import measure_torch

    measure_torch(into, reproduce=False)
    return into / "torch-project"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, help="a kept `bench/knowledge.py --torch` folder")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="errcat-torch-errors-") as scratch:
        project = args.project / "torch-project" if args.project else built_project(Path(scratch))
        site = project / "build" / "site"
        started = time.perf_counter()
        errors = raised()
        by_file, files = entries(site)
        calls = helper_calls(site)
        ranked = []
        for error in errors:
            if error["message"] is None:
                print(f"  did not raise: {error['call']}")
                continue
            wanted = owner(error["frames"], by_file, calls)
            if wanted is None:
                where = error["frames"][-1] if error["frames"] else "outside torch's Python"
                print(f"  not a catalogued raise ({where}): {error['last'][:100]}")
                continue
            ranked.append((error, wanted))
        queries = [q for error, _ in ranked for q in (error["message"], error["last"])]
        boxed = search_box(site, queries)
        server = Server(project)
        try:
            served = [server.match(query) for query in queries]
        finally:
            server.close()
        explained = [explain(project, query) for query in queries]
        failures = 0
        print(
            f"\n{'call':62}  explain  api/match  search box  knowledge"
            "\n(rank of the entry by the message alone / by the traceback's last line)"
        )
        for index, (error, wanted) in enumerate(ranked):
            pair = slice(2 * index, 2 * index + 2)
            routes = [
                [rank(ids, wanted) for ids in found[pair]] for found in (explained, served, boxed)
            ]
            kinds = sorted({item["kind"] for item in files[wanted].get("knowledge") or ()})
            ok = all(r == 1 for route in routes for r in route) and bool(kinds)
            failures += not ok
            cells = ["/".join(str(r or "-") for r in route) for route in routes]
            print(
                f"{error['call'][:62]:62}  {cells[0]:7}  {cells[1]:9}  {cells[2]:10}  "
                f"{','.join(kinds) or 'none'}{'' if ok else '   <- not all first'}"
            )
        print(
            f"\n{len(ranked)} errors ranked of {len(CALLS)} calls; {len(ranked) - failures} first "
            f"in every route with knowledge on their page; {time.perf_counter() - started:.0f} s"
        )
        return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
