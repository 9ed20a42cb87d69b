"""A build never retires a site version that a server may still answer from: servers hold a
lease on the versions they serve, and `prune` spares those until they are let go."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
from test_serve import write_site

from catalog.core import lease
from catalog.publish.build import prune
from catalog.serve.app import SiteHolder
from catalog.serve.site import load_site

VERSIONS = ("site-20260101T000000-11", "site-20260101T000001-12", "site-20260101T000002-13")


def _versions(build: Path) -> list[Path]:
    folders = []
    for name in VERSIONS:
        folder = build / name
        (folder / "api").mkdir(parents=True)
        (folder / "index.html").write_text(name)
        folders.append(folder)
    (build / "site").symlink_to(VERSIONS[-1])
    return folders


def _holder(version: Path) -> subprocess.Popen[str]:
    """Another process holding a lease on `version` until its standard input closes."""
    code = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from catalog.core.lease import Lease
        held = Lease(Path({str(version)!r}))
        print("held" if held.holding else "not held", flush=True)
        sys.stdin.read()
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "held"
    return process


def test_a_leased_version_outlives_prune_until_its_server_lets_go(tmp_path: Path) -> None:
    """The oldest version, leased by a server process, is spared; once that process ends
    (its kernel lock with it) the next prune retires it and its lease file."""
    oldest, _, newest = _versions(tmp_path)
    holder = _holder(oldest)
    try:
        assert lease.held(oldest)
        prune(tmp_path / "site", keep={newest})
        assert (oldest / "index.html").read_text() == VERSIONS[0]
        assert not (tmp_path / VERSIONS[1]).exists(), "an unleased old version is retired"
    finally:
        holder.communicate(timeout=30)
    assert not lease.held(oldest)
    prune(tmp_path / "site", keep={newest})
    assert not oldest.exists()
    assert not lease.lease_file(oldest).exists()
    assert (newest / "index.html").exists()


def test_a_killed_server_holds_nothing(tmp_path: Path) -> None:
    """A lease is a kernel lock: a server killed outright leaves the version retirable."""
    oldest, _, newest = _versions(tmp_path)
    holder = _holder(oldest)
    holder.kill()
    holder.communicate(timeout=30)
    prune(tmp_path / "site", keep={newest})
    assert not oldest.exists()


def test_a_folder_errcat_did_not_publish_gets_no_lease_file(tmp_path: Path) -> None:
    """`errcat serve --site DIR` on a folder of the user's writes nothing beside it."""
    folder = tmp_path / "my-site"
    folder.mkdir()
    held = lease.Lease(folder)
    assert not held.holding
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my-site"]


def test_the_server_keeps_leases_on_its_current_and_previous_site(tmp_path: Path) -> None:
    """After two swaps the server holds the two newest versions it loaded, not the first."""
    build = tmp_path / "build"
    build.mkdir()
    roots = [write_site(build / name, name) for name in VERSIONS]
    link = build / "site"
    link.symlink_to(roots[0].name)
    holder = SiteHolder(link, load_site(link), recheck_interval=0)

    async def follow(target: Path) -> None:
        link.unlink()
        link.symlink_to(target.name)
        served = await holder.current()
        assert served.site.root == target.resolve()

    anyio.run(follow, roots[1])
    anyio.run(follow, roots[2])
    assert [lease.held(root) for root in roots] == [False, True, True]
