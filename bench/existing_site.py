"""errcat added to real projects' own MkDocs-Material sites: is each site still the project's?

    flock /tmp/errcat-heavy.lock .venv/bin/python bench/existing_site.py [--only NAME]

Three projects whose source distributions ship their docs and mkdocs.yml, each a different
shape: starlette (explicit nav, `custom_dir` overriding the navigation partials, mkdocstrings),
dirty-equals (mkdocstrings, mike, hooks through mkdocs-simple-hooks, no custom_dir) and
pydantic-settings (a `custom_dir` main.html, navigation tabs, a one-page nav). Each pinned sdist
is fetched with pip into `~/.cache/errcat-bench/sdists/` (sha256 checked) and unpacked afresh
under `~/.cache/errcat-bench/existing-site/`; nothing of theirs is kept in this repository.
The builds run in `~/.cache/errcat-bench/venv-sites-<digest of the pins>` (errcat editable from
this checkout, the sites' plugins; made on first use).

For each project: `mkdocs build --strict` before errcat (a strict build that is red before
errcat is reported, and both builds are then compared non-strict); adoption as the README says
(`errcat init`, `generated = false` for a docs-only adoption, `errcat new`, `errcat check`,
`- errcat` in its plugins and `- Errors: errors/` last in its nav); the build after, cold and
warm. Printed: build times; each of its own pages compared with its page before (identical but
for errcat's nav section, its tab where the site shows tabs, and the `rel="next"` link of the
page before it, or the first lines that differ otherwise); lunr's top results for five of its
own API names in its `search_index.json` before and after (with its own separator), and whether
the first result and the top five are the same; the errors reached from the nav. Exit 1 when a
site fails to build, one of its pages differs otherwise, or its top results changed.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = Path.home() / ".cache" / "errcat-bench"
WORK = CACHE / "existing-site"
PLUGINS = (
    "mkdocstrings==1.0.8",
    # 1.x, not 2.x: dirty-equals' mkdocs.yml lists its inventories under the handler's
    # `import` option, which 2.0 removed (starlette's builds the same on both).
    "mkdocstrings-python==1.19.0",
    "mike==2.2.0",
    "mkdocs-simple-hooks==0.1.5",
    "mkdocs-exclude==1.0.2",
    "lunr==0.8.0",
)
"""What the three sites' own mkdocs.yml need besides MkDocs and Material (pinned by errcat's
constraints.txt), and lunr.py to query their search indexes."""
VENV = CACHE / ("venv-sites-" + hashlib.sha256(" ".join(PLUGINS).encode()).hexdigest()[:10])
"""Named after its pins, so that changing one makes a new environment."""


@dataclasses.dataclass(frozen=True)
class Project:
    """One real project and the API names people search its docs for."""

    name: str
    version: str
    sha256: str
    queries: tuple[str, ...]


PROJECTS = (
    Project(
        "starlette",
        "1.10.0",
        "b8399098d4c1e3522734f7235dc79b1fc967f96cf139c81e0fa30479e0685f9b",
        ("Starlette", "JSONResponse", "WebSocket", "StaticFiles", "BackgroundTasks"),
    ),
    Project(
        "dirty-equals",
        "0.11",
        "f4ac74ee88f2d11e2fa0f65eb30ee4f07105c5f86f4dc92b09eb1138775027c3",
        ("IsInt", "IsDatetime", "IsDict", "IsStr", "HasAttributes"),
    ),
    Project(
        "pydantic-settings",
        "2.16.3",
        "10e36f616623ebb586c05ca3d3cd22927146869db413d4f14c20c514442a1337",
        ("BaseSettings", "SettingsConfigDict", "env_prefix", "SecretsSettingsSource", "CliApp"),
    ),
)


def _run(argv: list[str], cwd: Path, **env: str) -> tuple[int, str, float]:
    """Run `argv` in `cwd`; its exit status, its output (stdout and stderr) and its seconds."""
    started = time.perf_counter()
    done = subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **env},
    )
    return done.returncode, done.stdout + done.stderr, time.perf_counter() - started


def _venv() -> Path:
    """The bench's environment, made once: errcat from this checkout and the sites' plugins."""
    python = VENV / "bin" / "python"
    if not python.is_file():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        constraints = str(REPO / "constraints.txt")
        install = [str(python), "-m", "pip", "install", "-q", "-c", constraints]
        subprocess.run([*install, "-e", str(REPO), *PLUGINS], check=True)
    return VENV / "bin"


def _sdist(project: Project) -> Path:
    """The pinned sdist, downloaded once and checked against its sha256."""
    folder = CACHE / "sdists"
    stem = f"{project.name.replace('-', '_')}-{project.version}"
    path = folder / f"{stem}.tar.gz"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        pin = f"{project.name}=={project.version}"
        download = [sys.executable, "-m", "pip", "download", "-q", "--no-deps"]
        subprocess.run([*download, "--no-binary", ":all:", pin, "-d", str(folder)], check=True)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != project.sha256:
        raise SystemExit(f"{path}: sha256 {digest}, expected {project.sha256}")
    return path


def _unpack(project: Project, sdist: Path) -> Path:
    target = WORK / project.name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    with tarfile.open(sdist) as archive:
        archive.extractall(target, filter="data")
    (root,) = target.iterdir()
    return root


# -- adoption ---------------------------------------------------------------------------------


def _item_indent(lines: list[str], key: str) -> tuple[int, str] | None:
    """The line index of `key:` at the top level and the indentation of its first item."""
    for index, line in enumerate(lines):
        if line.rstrip() == f"{key}:":
            for item in lines[index + 1 :]:
                if item.strip():
                    return index, item[: len(item) - len(item.lstrip())]
    return None


def _with_errcat(text: str) -> str:
    """mkdocs.yml with `- errcat` last among its plugins (a `plugins: [search]` where it named
    none, MkDocs' default) and `- Errors: errors/` last in its nav, as the README says; edited
    as text, since these files hold tags (`!!python/name:`) a YAML round trip would lose."""
    lines = text.splitlines()
    for key, entry in (("plugins", "errcat"), ("nav", "Errors: errors/")):
        found = _item_indent(lines, key)
        if found is None:
            if key == "nav":
                continue  # no nav: errcat's section comes after the project's pages
            lines += ["plugins:", "  - search", "  - errcat"]
            continue
        start, indent = found
        end = start + 1
        while end < len(lines) and (not lines[end].strip() or lines[end].startswith(indent)):
            end += 1
        while not lines[end - 1].strip():
            end -= 1
        lines.insert(end, f"{indent}- {entry}")
    return "\n".join(lines) + "\n"


def _adopt(root: Path, bin_dir: Path) -> dict[str, object]:
    """errcat init, docs-only, new, check; the plugin and the nav entry in mkdocs.yml."""
    errcat = str(bin_dir / "errcat")
    facts: dict[str, object] = {}
    for command in (["init"], ["new"], ["check"]):
        if command == ["new"]:
            pyproject = root / "pyproject.toml"
            text = pyproject.read_text(encoding="utf-8")
            pyproject.write_text(
                re.sub(r"^generated = .*$", "generated = false", text, flags=re.MULTILINE),
                encoding="utf-8",
            )
        code, output, seconds = _run([errcat, *command], root)
        facts[command[0]] = (code, round(seconds, 1), output.strip().splitlines()[-1:])
    settings = root / "mkdocs.yml"
    settings.write_text(_with_errcat(settings.read_text(encoding="utf-8")), encoding="utf-8")
    return facts


# -- comparison -------------------------------------------------------------------------------

NEXT_LINK = re.compile(r'<link rel="next" href="(/|(\.\./)*)errors/">')


OPENINGS = ('<li class="md-nav__item md-nav__item--nested">', '<li class="md-tabs__item">')
"""How errcat's section starts in the navigation: its nested item in the sidebar, and its tab
where the theme shows navigation tabs (`navigation.tabs`)."""


def _is_errors_section(added: str) -> bool:
    text = added.strip()
    links = re.findall(r'href="([^"]*)"', text)
    return (
        text.startswith(OPENINGS)
        and text.endswith("</li>")
        and text.count("<li") == text.count("</li>")
        and re.search(r">\s*Errors\s*<", text) is not None
        and bool(links)
        and all(re.fullmatch(r"(/|(\.\./)*)errors/([a-z]+/)?", link) for link in links)
    )


def _without_section(after: str) -> tuple[str, int]:
    """`after` without errcat's nav sections (each sidebar item or tab whose label is Errors and
    whose links all lead into errors/, cut out by its balanced tags) and without the next-page
    link to errcat's section root; and how many were cut, per kind."""
    text, cut = NEXT_LINK.sub("", after), 0
    for opening in OPENINGS:
        start, found = 0, 0
        while (start := text.find(opening, start)) >= 0:
            depth, end = 0, start
            for tag in re.finditer(r"<(/?)li\b[^>]*>", text[start:]):
                depth += -1 if tag.group(1) else 1
                if depth == 0:
                    end = start + tag.end()
                    break
            if _is_errors_section(text[start:end]):
                text, found = text[:start] + text[end:], found + 1
            else:
                start += len(opening)
        cut = max(cut, found)
    return text, cut


def _compare(before: str, after: str) -> str | None:
    """None when `after` is `before` plus errcat's nav section and the next-page link to it
    (each documented), the theme's loops writing blank lines around them aside; otherwise
    the first lines that differ."""
    trimmed, cut = _without_section(after)

    def lines(html: str) -> list[str]:
        return [line for line in html.splitlines(keepends=True) if line.strip()]

    old, new = lines(before), lines(trimmed)
    if old == new:
        return None if cut <= 1 else "errcat's section twice"
    diff = difflib.unified_diff(old, new, n=0)
    return "".join(list(diff)[2:10])


def _pages(site: Path) -> dict[str, str]:
    return {
        path.relative_to(site).as_posix(): path.read_text(encoding="utf-8", errors="replace")
        for path in sorted(site.rglob("*.html"))
    }


def _search(site: Path, queries: tuple[str, ...], top: int = 5) -> dict[str, list[str]]:
    """lunr's top results for each query over the built search index, split with the site's
    own separator (as Material's worker splits them), titles and documents boosted as Material
    does (a document's `boost`, 1 where it has none)."""
    from lunr import lunr  # the bench venv's; imported in the worker process

    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    separator = re.compile(index["config"].get("separator") or r"[\s\-]+")

    def words(text: str) -> str:
        return " ".join(part for part in separator.split(re.sub(r"<[^>]+>", " ", text)) if part)

    documents = [
        (
            {"location": doc["location"], "title": words(doc["title"]), "text": words(doc["text"])},
            {"boost": doc.get("boost", 1)},
        )
        for doc in index["docs"]
    ]
    found = lunr(
        ref="location",
        fields=[{"field_name": "title", "boost": 1000}, "text"],
        documents=documents,
    )
    results = {}
    for query in queries:
        terms = " ".join(f"{word}*" for word in words(query).lower().split())
        results[query] = [hit["ref"] for hit in found.search(terms)[:top]]
    return results


# -- one project ------------------------------------------------------------------------------


def _build(bin_dir: Path, root: Path, out: Path, strict: bool) -> tuple[int, str, float]:
    argv = [str(bin_dir / "mkdocs"), "build", "-q", "-d", str(out)]
    return _run([*argv, "--strict" if strict else "--no-strict"], root)


def _errors_from_nav(site: Path) -> int:
    """How many error pages the section root, linked from the home page's nav, lists."""
    home = (site / "index.html").read_text(encoding="utf-8")
    if not re.search(r'href="(\./)?errors/"', home):
        return 0
    root = (site / "errors" / "index.html").read_text(encoding="utf-8")
    return len(set(re.findall(r'href="([0-9a-f]{16})/"', root)))


def bench(project: Project, bin_dir: Path) -> dict[str, object]:
    root = _unpack(project, _sdist(project))
    # The sites' own pages import the package for mkdocstrings: it is found from the root.
    facts: dict[str, object] = {"project": f"{project.name} {project.version}"}
    code, output, seconds = _build(bin_dir, root, root / "_before", strict=True)
    strict = code == 0
    if not strict:
        facts["strict before errcat"] = (
            "red: "
            + " | ".join(
                line.strip() for line in output.splitlines() if "WARNING" in line or "ERROR" in line
            )[:600]
        )
        code, output, seconds = _build(bin_dir, root, root / "_before", strict=False)
        if code != 0:
            facts["before"] = f"failed: {output[-800:]}"
            return facts
    facts["build before (s)"] = round(seconds, 1)
    facts["adoption"] = _adopt(root, bin_dir)
    code, output, cold = _build(bin_dir, root, root / "_after", strict=strict)
    if code != 0:
        facts["after"] = f"failed ({'strict' if strict else 'lax'}): {output[-1500:]}"
        return facts
    _, _, warm = _build(bin_dir, root, root / "_after", strict=strict)
    facts["build after, cold / warm (s)"] = (round(cold, 1), round(warm, 1))
    facts["strict after errcat"] = "green" if strict else "not run (red before)"
    before, after = _pages(root / "_before"), _pages(root / "_after")
    changed = {page: _compare(html, after.get(page, "")) for page, html in before.items()}
    different = {page: why for page, why in changed.items() if why is not None}
    facts["own pages"] = len(before)
    facts["own pages unchanged but for errcat's nav entry"] = len(before) - len(different)
    if different:
        facts["own pages that differ otherwise"] = dict(list(different.items())[:3])
    facts["errcat pages"] = len([page for page in after if page.startswith("errors/")])
    facts["errors listed from the nav's section root"] = _errors_from_nav(root / "_after")
    searched = {
        "before": _search(root / "_before", project.queries),
        "after": _search(root / "_after", project.queries),
    }
    # The same top results: the pages that led before lead after, errcat's below them; their
    # order among themselves may move, since every page added to a lunr index changes its
    # words' weights (inverse document frequency, mean field length).
    first, kept, ordered = {}, {}, {}
    for query in project.queries:
        old, new = searched["before"][query], searched["after"][query]
        first[query] = new[:1] == old[:1]
        kept[query] = set(new[: len(old)]) == set(old)
        ordered[query] = new[: len(old)] == old
    facts["search (top 5, before -> after)"] = {
        query: {"before": searched["before"][query], "after": searched["after"][query]}
        for query in project.queries
    }
    facts["same first result"] = first
    facts["same top results (any order)"] = kept
    facts["same top results, same order"] = ordered
    return facts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=[project.name for project in PROJECTS])
    args = parser.parse_args(argv)
    bin_dir = _venv()
    if Path(sys.executable).parent != bin_dir:
        # lunr lives in the bench's environment: the comparison runs there.
        code, output, _ = _run([str(bin_dir / "python"), __file__, *sys.argv[1:]], REPO)
        print(output, end="")
        return code
    failed = 0
    for project in PROJECTS:
        if args.only and project.name != args.only:
            continue
        facts = bench(project, bin_dir)
        print(json.dumps(facts, indent=2))
        failed += (
            "own pages that differ otherwise" in facts
            or "after" in facts
            or "before" in facts
            or not all(facts.get("same top results (any order)", {}).values())
            or not all(facts.get("same first result", {}).values())
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
