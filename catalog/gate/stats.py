"""Coverage figures: how much of the package the catalog explains, and how well.

`compute_stats(config)` is what `errcat stats` prints and what the site's home page shows.

- *Raise sites catalogued*: sites of the package that raise a catalog entry (typed, or still
  raw with an entry's message), out of every site that is neither a re-raise nor exempted with
  `# errcat: ignore[...]`; exempted sites are counted on their own.
- *Entries complete*: `active` entries with every piece of prose (meaning, at least two
  solutions, an example, the trigger, at least one situation), out of the live (not retired)
  entries.
- *Examples verified*: per platform, live entries whose current example (same hash) the
  results file records as verified there, out of live entries with an example.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from catalog.core.config import Config
from catalog.core.model import Catalog, Entry, Status
from catalog.entries.verified import RESULTS_FILE, load_results, verified_on
from catalog.matching.sites import Matcher
from extractor.model import ScanReport


@dataclass(frozen=True)
class Stats:
    """The coverage figures of one catalog and package."""

    sites: int
    """Raise sites that must be catalogued: all sites but re-raises and exempted ones."""
    sites_catalogued: int
    """Of `sites`, those that raise a catalog entry."""
    sites_exempted: int
    """Sites marked `# errcat: ignore[reason]`."""
    entries_by_status: dict[str, int]
    """Entry count per status (`draft`, `active`, `retired`), every status present."""
    entries_live: int
    """Entries that are not retired."""
    entries_complete: int
    """Active entries with all prose written."""
    examples: int
    """Live entries with an example."""
    examples_verified: dict[str, int]
    """Per platform, live entries whose current example is verified there (sorted by platform)."""

    @property
    def sites_percent(self) -> float:
        return _percent(self.sites_catalogued, self.sites)

    @property
    def complete_percent(self) -> float:
        return _percent(self.entries_complete, self.entries_live)

    def as_dict(self) -> dict[str, object]:
        """The figures as `errcat stats --json` prints them."""
        return {
            "sites": {
                "total": self.sites,
                "catalogued": self.sites_catalogued,
                "exempted": self.sites_exempted,
                "percent": self.sites_percent,
            },
            "entries": {
                "by_status": dict(self.entries_by_status),
                "live": self.entries_live,
                "complete": self.entries_complete,
                "percent_complete": self.complete_percent,
            },
            "examples": {
                "total": self.examples,
                "verified": [
                    {
                        "platform": platform,
                        "count": count,
                        "percent": _percent(count, self.examples),
                    }
                    for platform, count in self.examples_verified.items()
                ],
            },
        }


def _percent(part: int, whole: int) -> float:
    # An empty whole is fully covered: nothing is missing.
    return round(100.0 * part / whole, 1) if whole else 100.0


def is_complete(entry: Entry) -> bool:
    """Active, with meaning, two or more solutions, an example, a trigger and a situation."""
    return (
        entry.status is Status.ACTIVE
        and bool(entry.meaning and entry.meaning.strip())
        and len(entry.solutions) >= 2
        and entry.example is not None
        and bool(entry.trigger and entry.trigger.strip())
        and len(entry.situations) >= 1
    )


def catalog_stats(
    catalog: Catalog,
    report: ScanReport,
    generated_module: str,
    results_path: Path,
    matcher: Matcher | None = None,
) -> Stats:
    """The figures for a loaded catalog, a scan of its package, and the results file.

    `matcher` defaults to one without a cache of site messages.
    """
    matcher = matcher or Matcher(catalog, generated_module)
    sites = catalogued = exempted = 0
    for site in report.sites:
        if site.reraise:
            continue
        if site.ignored is not None:
            exempted += 1
            continue
        sites += 1
        if matcher.match(site) is not None:
            catalogued += 1
    by_status = {status.value: 0 for status in Status}
    for entry in catalog:
        by_status[entry.status.value] += 1
    live = [entry for entry in catalog if entry.status is not Status.RETIRED]
    results = load_results(results_path)
    verified: dict[str, int] = {}
    for entry in live:
        for row in verified_on(entry, results):
            verified[row["platform"]] = verified.get(row["platform"], 0) + 1
    return Stats(
        sites=sites,
        sites_catalogued=catalogued,
        sites_exempted=exempted,
        entries_by_status=by_status,
        entries_live=len(live),
        entries_complete=sum(is_complete(entry) for entry in live),
        examples=sum(entry.example is not None for entry in live),
        examples_verified=dict(sorted(verified.items())),
    )


def compute_stats(config: Config, scanner: Callable[[Config], ScanReport] | None = None) -> Stats:
    """Load the configured catalog (raises CatalogInvalid), scan the package, count.

    `scanner` defaults to scanning the configured package as `errcat check` does. The catalog
    and each site's message come from the project's cache when unchanged, as for `errcat
    check` (see catalog/gate/check.py), except inside `catalog.core.project.caching(False)`.
    """
    from catalog.core.project import generated_module, scan_package
    from catalog.entries.validate import valid_project_catalog
    from catalog.gate.check import cache_folder
    from catalog.matching.sites import SiteMessages

    cache = cache_folder(config)
    catalog = valid_project_catalog(config)
    report = (scanner or scan_package)(config)
    messages = SiteMessages.load(cache) if cache is not None else SiteMessages()
    module = generated_module(config)
    matcher = Matcher(catalog, module, messages)
    stats = catalog_stats(catalog, report, module, config.catalog / RESULTS_FILE, matcher)
    if cache is not None:
        messages.save(cache)
    return stats
