"""`errcat reproduce`: call public functions the way their raise sites say they fail, and record
the calls that were seen to raise their entry.

For each raise site of an entry (paired with entries by `catalog.matching.sites.Matcher`, as the
build pairs them), a few candidate calls of a public function that reaches it are built by
`catalog.evidence.candidates` from the site's signature and the conditions that lead to it.

Each call is a small program (`from widgets.core import turn` / `turn('x', -1)`) run by a
worker process through `catalog.core.example_worker.run_in_child`, the machinery that runs examples:
a fresh forked child per call with a time limit, its own process group and captured output.
Here the child also confines itself before the program runs (`example_worker.confine`): an
address-space limit (`MEMORY_LIMIT`), a temporary working folder that is also HOME and TMPDIR
(removed afterwards), no network (`socket` connect/getaddrinfo raise OSError: a guard inside
Python, not a sandbox) and no `os.fork`. A call that hangs, crashes, forks, runs out of memory or
kills its process is a failed attempt, and the run goes on. `jobs` workers run calls at once
(`default_jobs`: one per CPU), each keeping to the sites of one folder group at a time
(`_Calls`), while the later sites are still being read.

A call reproduces its entry when the child raised, the exception's class is the entry's (its
generated class by id, or the class named by `exception`), `str(exc)` is the whole of a message
the entry's template prints (`LiteralPattern`, as `errcat explain` matches), and the traceback's
innermost frame is the site's file, on a line of its raise statement.

Results are committed beside the catalog (`reproduced.json`, like `verified.json`). Each is tied
to a digest of the site's file and the call, so `load_reproduced` drops results for code that
changed since they were seen.
"""

from __future__ import annotations

import ast
import hashlib
import os
import queue
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from catalog.core.worker_process import WorkerFailed, WorkerProcess
from catalog.evidence.call_worker import MEMORY_LIMIT, PRELOAD_ENV
from catalog.evidence.candidates import (
    MAX_CANDIDATES,
    Avoid,
    Candidate,
    Search,
    ValuesByClass,
    avoiding,
    candidates,
)
from catalog.evidence.example_values import (
    NO_VALUES,
    ExampleValues,
    harvest,
    probe_program,
    read_probe,
    read_result,
    read_search,
    search_program,
)
from catalog.evidence.limits import DEFAULT_TIMEOUT
from catalog.evidence.reaching import Reaching
from catalog.evidence.stops import HELPER_FRAMES, Stops, on_raise_lines
from catalog.evidence.stored import FileBytes, dump_results, read_results

if TYPE_CHECKING:
    from catalog.core.config import Config
    from catalog.core.model import Catalog, Entry
    from extractor.model import RaiseSite

RESULTS_FILE = "reproduced.json"
"""File name inside the catalog folder."""
FORMAT_VERSION = 1
OUTPUT_CHARS = 300
"""Characters of the exception line kept in the results file."""
PROBE_TIMEOUT = 120.0
"""Seconds the child making the values of the package's examples may take in all."""

# ---------------------------------------------------------------------------------------------
# Running calls: worker processes that fork a confined child per call.


class _Worker:
    """A worker whose children run candidate calls confined (`catalog.core.example_worker`)."""

    def __init__(
        self, cwd: Path, path: Path, preload: str | None = None, python: str | None = None
    ) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(path), env.get("PYTHONPATH")) if p)
        # The folder the package's import runs in, removed by `close` whatever the worker did.
        self.home = tempfile.mkdtemp(prefix="errcat-reproduce-worker-") if preload else None
        if preload and self.home:
            env[PRELOAD_ENV] = f"{preload}{os.pathsep}{self.home}"
        if python is None:
            # `import errcat` first: it pins errcat's own `catalog` against a project's folder.
            command = (
                "import errcat; from catalog.evidence.call_worker import worker_main; worker_main()"
            )
            argv = [sys.executable, "-c", command]
        else:
            # Another interpreter (the project's environment) imports the worker's own module
            # from errcat's folder, which then leaves its path: nothing else of errcat's
            # environment (built for another Python, perhaps) is importable there. `-B`: no
            # bytecode of another version written into errcat's folder.
            home = str(Path(__file__).resolve().parents[2])
            command = (
                f"import sys; sys.path.insert(0, {home!r}); "
                "from catalog.evidence.call_worker import worker_main; "
                f"sys.path.remove({home!r}); worker_main()"
            )
            argv = [python, "-B", "-c", command]
        self.worker = WorkerProcess(argv, cwd=cwd, env=env, name="reproduce", start_timeout=60.0)

    def run(
        self, program: str, timeout: float, workdir: str, module: str | None = None
    ) -> dict[str, Any]:
        """Run `program` in a confined child; the worker imports `module` first, once."""
        task = {
            "kind": "run",
            "module": module,
            "code": program,
            "filename": "<errcat reproduce>",
            "timeout": timeout,
            "confine": {
                "workdir": workdir,
                "memory": MEMORY_LIMIT,
                "network": False,
                "fork": False,
            },
        }
        return self.worker.ask(task, timeout)

    def close(self) -> None:
        self.worker.close()
        if self.home is not None:
            shutil.rmtree(self.home, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Judging and the run.


@dataclass(frozen=True)
class Reproduction:
    """A call seen to raise its entry at its site (a record of the results file)."""

    path: str
    """The site's file, relative to the project root, `/`-separated."""
    line: int
    """1-based line of the site's `raise`."""
    call: str
    output: str
    """The exception line it printed (`ValueError: ...`), capped at `OUTPUT_CHARS`."""
    digest: str
    """SHA-256 over the site file's bytes and the call, when it was seen."""

    def as_dict(self) -> dict[str, object]:
        return {
            "site": {"path": self.path, "line": self.line},
            "call": self.call,
            "output": self.output,
            "digest": self.digest,
        }


@dataclass(frozen=True)
class Attempt:
    """One call run for one site."""

    call: str
    ended: str
    """`raised`, `finished`, `timeout` or `crashed` (as examples end)."""
    problem: str | None
    """Why it did not reproduce the entry; None when it did."""
    output: str = ""
    seconds: float = 0.0


@dataclass(frozen=True)
class SiteOutcome:
    path: str
    line: int
    function: str | None
    no_candidate: str | None = None
    """Why no call was built for this site; None when calls were tried."""
    attempts: tuple[Attempt, ...] = ()
    reproduction: Reproduction | None = None


@dataclass(frozen=True)
class EntryOutcome:
    entry_id: str
    name: str
    sites: tuple[SiteOutcome, ...] = ()

    @property
    def reproductions(self) -> tuple[Reproduction, ...]:
        found = [s.reproduction for s in self.sites if s.reproduction is not None]
        return tuple(sorted(found, key=lambda r: (len(r.call), r.path, r.line)))

    @property
    def outcome(self) -> str:
        """`reproduced`, `failed` (calls were run, none reproduced) or `no candidate`."""
        if self.reproductions:
            return "reproduced"
        return "failed" if any(site.attempts for site in self.sites) else "no candidate"

    @property
    def why(self) -> str:
        """Why it was not reproduced: the last problem of each site, in site order."""
        if not self.sites:
            return "raised nowhere in the package"
        reasons: list[str] = []
        for site in self.sites:
            if site.attempts:
                last = site.attempts[-1]
                reasons.append(f"{site.path}:{site.line}: {last.call} {last.problem}")
            elif site.no_candidate:
                reasons.append(f"{site.path}:{site.line}: {site.no_candidate}")
        return "; ".join(reasons)

    def as_dict(self) -> dict[str, object]:
        best = self.reproductions[0] if self.reproductions else None
        return {
            "id": self.entry_id,
            "name": self.name,
            "outcome": self.outcome,
            "call": best.call if best else None,
            "why": None if best else self.why,
            "sites": [
                {
                    "path": s.path,
                    "line": s.line,
                    "function": s.function,
                    "no_candidate": s.no_candidate,
                    "attempts": [
                        {"call": a.call, "ended": a.ended, "problem": a.problem} for a in s.attempts
                    ],
                    "reproduced": s.reproduction.as_dict() if s.reproduction else None,
                }
                for s in self.sites
            ],
        }


@dataclass(frozen=True)
class ReproduceRun:
    entries: tuple[EntryOutcome, ...]
    seconds: float = 0.0
    made: int = 0
    """Values the package's docstring examples make that calls could pass (`example_values`)."""
    package: str | None = None
    """The import name of the package the calls were into, where it has one."""

    def counts(self) -> dict[str, int]:
        counts = {"reproduced": 0, "failed": 0, "no candidate": 0}
        for entry in self.entries:
            counts[entry.outcome] += 1
        return counts

    def unimportable(self) -> dict[str, int]:
        """Modules outside the package that calls could not import (`No module named 'six'`),
        by the number of entries with such a call, most first: the package's dependencies are
        missing where the calls ran, not an error of the package."""
        found: dict[str, set[str]] = {}
        top = (self.package or "").partition(".")[0]
        for entry in self.entries:
            for site in entry.sites:
                for attempt in site.attempts:
                    missing = _MISSING.search(attempt.problem or "")
                    if missing and missing[1].partition(".")[0] != top:
                        found.setdefault(missing[1], set()).add(entry.entry_id)
        return dict(sorted(((k, len(v)) for k, v in found.items()), key=lambda kv: -kv[1]))


_MISSING = re.compile(r"raised ModuleNotFoundError: No module named '([\w.]+)'")


def digest(data: bytes, call: str) -> str:
    """What ties a result to the code it was seen on: the site file's bytes and the call."""
    return hashlib.sha256(data + b"\0" + call.encode("utf-8")).hexdigest()


def _template_literals(message: str) -> tuple[str, ...] | None:
    """The literal pieces around a template's placeholders (one more than them)."""
    import string

    literals = [""]
    try:
        for literal, field_name, _spec, _conversion in string.Formatter().parse(message):
            literals[-1] += literal
            if field_name is not None:
                literals.append("")
    except ValueError:
        return None
    return tuple(literals)


def message_matches(entry: Entry, message: str) -> bool:
    """Whether `message` is the whole of a text the entry's template prints."""
    from catalog.matching.messages import FULL, LiteralPattern

    literals = _template_literals(entry.message)
    if literals is None:
        return False
    pattern = LiteralPattern(literals)
    if pattern.groups(message, FULL) is not None:
        return True
    value = _printed_string(message)
    return value is not None and pattern.groups(value, FULL) is not None


def _printed_string(message: str) -> str | None:
    """The text a message prints as a Python string literal (`str()` of a KeyError is its
    argument's repr: `'no such key'`), or None when it is not exactly one."""
    if message[:1] not in ("'", '"'):
        return None
    try:
        value = ast.literal_eval(message)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, str) else None


def judge(
    entry: Entry,
    site: RaiseSite,
    site_file: Path,
    reply: Mapping[str, Any],
    root: Path | None = None,
) -> str | None:
    """Why a call's reply does not reproduce `entry` at `site`; None when it does.

    It does when the call raised the entry's class with a message its template prints, at the
    site: the innermost frame lies on the site's lines, or, for a site that is a call of a raise
    helper (`RaiseSite.call`: `self.fail("...")`, `torch._check(cond, lambda: "...")`), a frame
    at most `HELPER_FRAMES` out from the raise does, every frame inside it being in the
    package's files (under `root`, the import root): the helper raised what the site's call
    gave it."""
    ended = reply.get("ended")
    if reply.get("forked"):
        return "forked a process (not allowed)"
    if ended == "finished":
        return "ran without raising"
    if ended != "raised":
        return str(reply.get("detail") or f"ended as {ended}")
    exception = str(reply.get("exception"))
    said = f"raised {exception}: {reply.get('message')}"
    if reply.get("exception_id") != entry.id and exception != entry.exception:
        return f"{said}, not {entry.exception}"
    if not message_matches(entry, str(reply.get("message"))):
        return f"{said}, which the entry's message does not print"
    where = reply.get("where")
    if not isinstance(where, list) or len(where) != 2:
        return f"{said}, from an unknown place"
    filename, line = str(where[0]), int(where[1])
    if _at_site(site, site_file, filename, line):
        return None
    frames = reply.get("frames")
    if site.call and root is not None and isinstance(frames, list):
        inside = _package_files(root)
        for depth, frame in enumerate(frames[1 : HELPER_FRAMES + 1], start=1):
            if not isinstance(frame, list) or len(frame) != 2:
                break
            if _at_site(site, site_file, str(frame[0]), int(frame[1])):
                if all(inside(str(f[0])) for f in frames[:depth]):
                    return None
                break
    return f"{said}, at {filename}:{line}, not at the site"


def _at_site(site: RaiseSite, site_file: Path, filename: str, line: int) -> bool:
    try:
        same_file = Path(filename).resolve() == site_file.resolve()
    except OSError:
        return False
    return same_file and on_raise_lines(site, line)


def _package_files(root: Path) -> Callable[[str], bool]:
    resolved = root.resolve()

    def inside(filename: str) -> bool:
        try:
            return Path(filename).resolve().is_relative_to(resolved)
        except OSError:
            return False

    return inside


def _exception_line(reply: Mapping[str, Any]) -> str:
    line = f"{reply.get('exception')}: {reply.get('message')}"
    return line if len(line) <= OUTPUT_CHARS else line[: OUTPUT_CHARS - 3] + "..."


@dataclass
class _Job:
    entry: Entry
    site: RaiseSite
    module: str
    site_file: Path
    candidates: list[Candidate]
    attempts: list[Attempt] = field(default_factory=list)
    reproduction: Reproduction | None = None
    stopped: list[Mapping[str, Any]] = field(default_factory=list)
    """The replies of calls that raised, but not what the site raises there: where each
    stopped is what a second round steers past (`_steered_past`)."""


class _Pool:
    """Workers started on first use; restarted when one dies.

    A thread keeps the worker it used for its next call (`give`), so the modules a worker
    imported for one call serve that thread's later calls into them; `release` hands it on to
    whichever thread starts next."""

    def __init__(
        self, cwd: Path, path: Path, preload: str | None = None, python: str | None = None
    ) -> None:
        self.cwd = cwd
        self.path = path
        self.preload = preload
        self.python = python
        """The interpreter the workers run on; None for errcat's own."""
        self.idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        self.own = threading.local()
        self.unsafe: set[str] = set()
        """Modules a call into which cost a worker: never imported by a worker again."""
        self.every: list[_Worker] = []
        self.lock = threading.Lock()
        self.closed = False

    def take(self) -> _Worker:
        kept: _Worker | None = getattr(self.own, "worker", None)
        if kept is not None:
            self.own.worker = None
            return kept
        try:
            return self.idle.get_nowait()
        except queue.Empty:
            pass
        # A thread still finishing its call when the run stops (Ctrl-C) must not leave a
        # worker that nobody closes.
        if self.closed:
            raise WorkerFailed("the run is stopping")
        worker = _Worker(self.cwd, self.path, self.preload, self.python)
        with self.lock:
            if not self.closed:
                self.every.append(worker)
                return worker
        worker.close()
        raise WorkerFailed("the run is stopping")

    def give(self, worker: _Worker) -> None:
        self.own.worker = worker

    def release(self) -> None:
        """This thread makes no more calls: its worker goes to the others."""
        kept: _Worker | None = getattr(self.own, "worker", None)
        if kept is not None:
            self.own.worker = None
            self.idle.put(kept)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            for worker in self.every:
                worker.close()


def _run_program(
    pool: _Pool, program: str, module: str, timeout: float, read_back: bool = False
) -> tuple[dict[str, Any], str | None]:
    """Run `program` in a confined child of a worker that imported `module` first; its reply,
    and, with `read_back`, what it wrote to `example_values.RESULT_FILE` in its working
    folder (None if nothing)."""
    workdir = tempfile.mkdtemp(prefix="errcat-reproduce-")
    try:
        worker = pool.take()
        preload = None if module in pool.unsafe else module
        try:
            reply = worker.run(program, timeout, workdir, preload)
        except WorkerFailed:
            reply = {"ended": "crashed", "detail": "killed the worker running it"}
            # Its import may be what hung or killed the worker: the next one leaves it to
            # the children.
            pool.unsafe.add(module)
        else:
            pool.give(worker)
    except WorkerFailed as failed:
        reply = {"ended": "crashed", "detail": str(failed)}
    finally:
        written = read_result(Path(workdir)) if read_back else None
        # A program may leave read-only folders behind; whatever stays is in TMPDIR.
        shutil.rmtree(workdir, ignore_errors=True)
    return reply, written


def _run_job(job: _Job, pool: _Pool, timeout: float) -> None:
    _try_calls(job, pool, timeout, [c for c in job.candidates if c.search is None])
    for candidate in job.candidates:
        if job.reproduction is not None:
            return
        if candidate.search is not None:
            _try_calls(job, pool, timeout, _found(job, pool, timeout, candidate.search))


def _found(job: _Job, pool: _Pool, timeout: float, search: Search) -> list[Candidate]:
    """The calls a search in a child found to meet every test of the site
    (`example_values.search_program`), shortest first; failing those, one under which no test
    failed."""
    program = search_program(
        job.module,
        search.needs,
        search.options(),
        search.tests,
        MAX_CANDIDATES,
        # Room for the worker to make its child and for the child to write what it found.
        seconds=max(timeout * 0.6, timeout - 3.0),
    )
    _reply, written = _run_program(pool, program, job.module, timeout, read_back=True)
    held, unjudged = read_search(written)
    calls = [search.call(picks) for picks in held or unjudged[:1]]
    return sorted((c for c in calls if c is not None), key=lambda c: len(c.call))


def _try_calls(job: _Job, pool: _Pool, timeout: float, calls: Sequence[Candidate]) -> None:
    for candidate in calls:
        started = time.monotonic()
        reply, _ = _run_program(pool, candidate.program, candidate.module, timeout)
        problem = judge(job.entry, job.site, job.site_file, reply, pool.path)
        seconds = float(reply.get("seconds", time.monotonic() - started))
        output = _exception_line(reply) if reply.get("ended") == "raised" else ""
        job.attempts.append(
            Attempt(candidate.shown, str(reply.get("ended")), problem, output, seconds)
        )
        if problem is not None and reply.get("ended") == "raised":
            job.stopped.append({"ended": "raised", "frames": reply.get("frames")})
        if problem is None:
            try:
                data = job.site_file.read_bytes()
            except OSError:
                continue
            job.reproduction = Reproduction(
                job.site.path,
                job.site.line,
                candidate.shown,
                output,
                digest(data, candidate.shown),
            )
            return


def sites_by_entry(config: Config, catalog: Catalog) -> dict[str, list[RaiseSite]]:
    """Every entry's raise sites in the package, paired as the build pairs them."""
    from catalog.core.project import generated_module, scan_package
    from catalog.matching.sites import Matcher

    report = scan_package(config)
    matcher = Matcher(catalog, generated_module(config))
    found: dict[str, list[RaiseSite]] = {}
    for site in report.sites:
        match = matcher.match(site)
        if match is not None:
            found.setdefault(match.entry.id, []).append(site)
    for sites in found.values():
        sites.sort(key=lambda s: (s.path, s.line, s.column))
    return found


def reproduce(
    config: Config,
    catalog: Catalog,
    *,
    only: Iterable[str] | None = None,
    jobs: int = 1,
    timeout: float = DEFAULT_TIMEOUT,
    sites: Mapping[str, Sequence[RaiseSite]] | None = None,
    python: str | None = None,
) -> ReproduceRun:
    """Try the candidate calls of every entry's sites (or of the ids in `only`), `jobs` at once,
    on `python` (errcat's own interpreter when None); `sites` are `sites_by_entry`'s, when the
    caller has them.

    Calls start while later sites are still being read: the reading is errcat's own work, the
    calls the children's, so on more than one CPU they overlap."""
    from catalog.core.project import import_root, module_name

    started = time.monotonic()
    wanted = list(dict.fromkeys(only)) if only is not None else None
    entries = list(catalog)
    if wanted is not None:
        by_id = catalog.by_id()
        entries = [by_id[entry_id] for entry_id in wanted if entry_id in by_id]
    if sites is None:
        sites = sites_by_entry(config, catalog)
    try:
        package: str | None = module_name(config, config.package)
    except ValueError:
        package = None
    pool = _Pool(import_root(config), import_root(config), package or None, python)
    plans: dict[str, list[SiteOutcome | _Job]] = {}
    try:
        values = _values(config, package, pool) if package else NO_VALUES
        pool.release()
        every_site = [site for found in sites.values() for site in found]
        reaching = Reaching(config, values, every_site)
        calls = _Calls(pool, timeout, jobs)
        try:
            first = {entry.id: _first_site(sites.get(entry.id, [])) for entry in entries}
            group: str | None = None
            for entry in sorted(entries, key=lambda e: first[e.id]):
                if _group(first[entry.id]) != group:
                    # The last group's calls start while this one's sites are read.
                    calls.flush()
                    group = _group(first[entry.id])
                plan = plans[entry.id] = []
                for site in sites.get(entry.id, []):
                    planned = _plan(config, reaching, values, entry, site)
                    plan.append(planned)
                    if isinstance(planned, _Job):
                        calls.add(planned)
        except BaseException:
            calls.stop()
            raise
        calls.finish()
        # A second round, once every first call ran: the calls that stopped at another check of
        # the package are tried again, steered past it.
        stops = Stops(config.root, every_site)
        calls = _Calls(pool, timeout, jobs)
        try:
            for plan in plans.values():
                for item in plan:
                    if isinstance(item, _Job) and _steered_past(config, reaching, stops, item):
                        calls.add(item)
        except BaseException:
            calls.stop()
            raise
        calls.finish()
    finally:
        pool.close()
    outcomes = []
    for entry in entries:
        done = tuple(
            SiteOutcome(
                item.site.path,
                item.site.line,
                item.site.function,
                attempts=tuple(item.attempts),
                reproduction=item.reproduction,
            )
            if isinstance(item, _Job)
            else item
            for item in plans[entry.id]
        )
        outcomes.append(EntryOutcome(entry.id, entry.name, done))
    return ReproduceRun(tuple(outcomes), time.monotonic() - started, values.made, package)


def _plan(
    config: Config, reaching: Reaching, values: ExampleValues, entry: Entry, site: RaiseSite
) -> SiteOutcome | _Job:
    """The calls to try for one site, or why there are none."""
    from catalog.core.project import module_name

    site_file = config.root / site.path
    try:
        module = module_name(config, site_file)
        found = _site_calls(reaching, site, module, values.by_class)
    except ValueError as why:
        return SiteOutcome(site.path, site.line, site.function, str(why))
    except Exception as bug:
        # One site's reading must not end a run over a whole package: said (a bug to report),
        # and the run goes on.
        return SiteOutcome(site.path, site.line, site.function, _said_bug(site, bug))
    return _Job(entry, site, module, site_file, found)


def _site_calls(
    reaching: Reaching,
    site: RaiseSite,
    module: str,
    by_class: ValuesByClass | None,
    avoid: Avoid | None = None,
) -> list[Candidate]:
    """`candidates` of a site, with what `reaching` knows of it; ValueError saying why none."""
    return candidates(
        replace(site, signature=reaching.signature(site)),
        module,
        reaching.callers(site),
        reaching.own_examples(site, module),
        reaching.build,
        by_class,
        reaching.own_types(site),
        reaching.constants(site.path),
        avoid,
    )


def _said_bug(site: RaiseSite, bug: Exception) -> str:
    """A bug of errcat's met building a site's calls, said on stderr as well as returned."""
    said = f"errcat failed to build its calls ({type(bug).__name__}: {bug})"
    print(f"errcat reproduce: {site.path}:{site.line}: {said}", file=sys.stderr)
    return said


MAX_STOPS = 2
"""Checks a site's second round steers past: those its first calls stopped at first."""


def _steered_past(config: Config, reaching: Reaching, stops: Stops, job: _Job) -> bool:
    """Give a job its second round: the calls that meet, besides the site's tests, the negation
    of each check its first calls stopped at (`candidates.avoiding`), but for those it tried;
    whether there are any. A job already reproduced, or whose calls stopped at no other site
    of the package, has none."""
    if job.reproduction is not None:
        return False
    stopped, job.stopped = job.stopped, []
    try:
        avoid = _avoid(config, reaching, stops, job.site, stopped)
        found = _site_calls(reaching, job.site, job.module, None, avoid) if avoid else []
    except ValueError:
        return False
    except Exception as bug:
        # As in the first round: said, and the run goes on without this site's second round.
        _said_bug(job.site, bug)
        return False
    tried = {attempt.call for attempt in job.attempts}
    job.candidates = [c for c in found if c.shown not in tried and c.search is None]
    return bool(job.candidates)


def _avoid(
    config: Config,
    reaching: Reaching,
    stops: Stops,
    site: RaiseSite,
    replies: Sequence[Mapping[str, Any]],
) -> Avoid:
    """What the calls of `site` must meet not to stop where `replies` did: the checks of the
    package they raised at (up to `MAX_STOPS`, in the order met), each said by `avoiding`."""
    from catalog.core.project import module_name

    avoid: dict[tuple[str, str], list[ast.expr]] = {}
    seen: list[RaiseSite] = []
    for reply in replies:
        stop = stops.site_of(reply)
        if stop is None or stop == site or stop in seen:
            continue
        seen.append(stop)
        if len(seen) > MAX_STOPS:
            break
        said = avoiding(
            replace(stop, signature=reaching.signature(stop)),
            module_name(config, config.root / stop.path),
            reaching.callers(stop),
            reaching.constants(stop.path),
        )
        for key, tests in said.items():
            avoid.setdefault(key, []).extend(tests)
    return avoid


def default_jobs() -> int:
    """Calls run at once unless told: one per CPU errcat may run on, as long as the memory
    holds a worker and its child at their limit each (`MEMORY_LIMIT` of address space)."""
    from extractor.jobs import available_cpus

    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return available_cpus()
    return max(1, min(available_cpus(), memory // (2 * MEMORY_LIMIT)))


GROUP_PARTS = 3
"""Parts of a site file's path that name its group (`torch/_inductor/codegen`)."""
BATCH_JOBS = 32
"""Most sites in one batch of calls."""


def _group(path: str) -> str:
    """The group of a site's file: its first `GROUP_PARTS` folders (`torch/_inductor/codegen`).

    The calls of a group run one after another on one worker: the first call into a module
    imports it in the worker (torch's compiler modules take seconds), and the next call into
    it or into a module that imports the same finds it loaded. Two workers on one group would
    each import it."""
    return "/".join(path.split("/")[:GROUP_PARTS])


def _first_site(sites: Sequence[RaiseSite]) -> str:
    """The file an entry's calls are ordered by: its first site's."""
    return min((site.path for site in sites), default="")


class _Calls:
    """Threads that run the calls of planned sites while more are being planned.

    Jobs are handed over in batches (`flush`, and every `BATCH_JOBS`), each of one group's
    sites (`_group`) where the planner flushes as a group ends, and a thread keeps its worker
    from batch to batch (`_Pool.give`)."""

    def __init__(self, pool: _Pool, timeout: float, jobs: int) -> None:
        self.pool = pool
        self.timeout = timeout
        self.batches: queue.SimpleQueue[list[_Job] | None] = queue.SimpleQueue()
        self.pending: list[_Job] = []
        self.errors: list[BaseException] = []
        self.threads = [threading.Thread(target=self._drain, daemon=True) for _ in range(jobs)]
        for thread in self.threads:
            thread.start()

    def add(self, job: _Job) -> None:
        self.pending.append(job)
        if len(self.pending) >= BATCH_JOBS:
            self.flush()

    def flush(self) -> None:
        """Hand the pending jobs over as one batch."""
        if self.pending:
            self.batches.put(self.pending)
            self.pending = []

    def _drain(self) -> None:
        try:
            while not self.errors:
                batch = self.batches.get()
                if batch is None:
                    return
                for job in batch:
                    if self.errors:
                        return
                    _run_job(job, self.pool, self.timeout)
        except BaseException as exc:  # surfaced in the planning thread by `finish`
            self.errors.append(exc)
        finally:
            self.pool.release()

    def finish(self) -> None:
        """Run what is left, wait for every call, and raise what a thread raised."""
        self.flush()
        try:
            self._join()
        except BaseException as stopping:  # Ctrl-C while waiting: no thread starts another job
            self.errors.append(stopping)
            raise
        if self.errors:
            raise self.errors[0]

    def stop(self) -> None:
        """The planning failed: no thread starts another job; wait for those running."""
        self.errors.append(RuntimeError("planning stopped"))
        self._join()

    def _join(self) -> None:
        for _ in self.threads:
            self.batches.put(None)
        for thread in self.threads:
            thread.join()


def _values(config: Config, package: str, pool: _Pool) -> ExampleValues:
    """The values the package's examples make (`catalog.evidence.example_values`), probed in
    one child of a worker."""
    harvested = harvest(config.package, package)
    if not harvested:
        return NO_VALUES
    # Each value has a second; the probe as a whole, what they may take together.
    _reply, written = _run_program(
        pool, probe_program(harvested), package, PROBE_TIMEOUT, read_back=True
    )
    return read_probe(harvested, written)


# ---------------------------------------------------------------------------------------------
# The results file.


def load_reproduced(catalog_folder: Path, root: Path) -> dict[str, tuple[Reproduction, ...]]:
    """Every entry's recorded reproductions whose site file and call still have their digest.

    `root` is the project root the paths are relative to. An absent, unreadable or unknown file
    gives nothing.
    """
    files = FileBytes(root)
    found: dict[str, tuple[Reproduction, ...]] = {}
    for entry_id, records in read_results(catalog_folder / RESULTS_FILE, FORMAT_VERSION).items():
        kept: list[Reproduction] = []
        for record in records:
            try:
                site = record["site"]
                reproduction = Reproduction(
                    str(site["path"]),
                    int(site["line"]),
                    str(record["call"]),
                    str(record["output"]),
                    str(record["digest"]),
                )
            except (KeyError, TypeError, ValueError):
                continue
            data_now = files(reproduction.path)
            if data_now is not None and digest(data_now, reproduction.call) == reproduction.digest:
                kept.append(reproduction)
        if kept:
            found[entry_id] = tuple(kept)
    return found


def dump_reproduced(results: Mapping[str, Sequence[Reproduction]]) -> str:
    """The file's text: sorted ids and records, so reruns give minimal diffs."""
    return dump_results(
        FORMAT_VERSION,
        {
            entry_id: [r.as_dict() for r in sorted(records, key=lambda r: (r.path, r.line))]
            for entry_id, records in results.items()
        },
    )


def record_reproduced(
    catalog_folder: Path, root: Path, run: ReproduceRun, catalog: Catalog | None = None
) -> None:
    """Replace the records of the entries this run tried, keep the others (while their code is
    unchanged), and write the file atomically. With `catalog`, ids not in it are dropped."""
    from catalog.authoring.codegen import write_atomically

    merged = dict(load_reproduced(catalog_folder, root))
    for outcome in run.entries:
        merged[outcome.entry_id] = outcome.reproductions
    if catalog is not None:
        known = {entry.id for entry in catalog}
        merged = {entry_id: rows for entry_id, rows in merged.items() if entry_id in known}
    write_atomically(catalog_folder / RESULTS_FILE, dump_reproduced(merged))


# ---------------------------------------------------------------------------------------------
# Knowledge.
