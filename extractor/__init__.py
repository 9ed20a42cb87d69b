"""The raise-site scanner: find every `raise` in Python sources and say what it raises.

It knows nothing of the catalog: it reports sites, and callers decide what they mean.

- `scan_paths(paths, ...)` scans files and folders (cached, in parallel) into a `ScanReport`;
- `extract_source(source, path)` extracts the sites of one source text into a `FileResult`.
"""

from __future__ import annotations

from extractor.files import PathError
from extractor.imports import ModuleName
from extractor.model import FileResult, RaiseSite, ScanFailure, ScanReport, SourceContext
from extractor.scan import scan_paths

__all__ = [
    "FileResult",
    "ModuleName",
    "PathError",
    "RaiseSite",
    "ScanFailure",
    "ScanReport",
    "SourceContext",
    "extract_source",
    "scan_paths",
]


def extract_source(source: str, path: str = "<string>", module: str | None = None) -> FileResult:
    """Extract the raise sites of one module's source text; never raises.

    `path` is written into the records. `module` is the dotted module name that relative
    imports and module-level definitions resolve against (default: the file name's stem).
    """
    # Imported here so that scans served from the cache never load libcst.
    from extractor.extract import extract_source as extract
    from extractor.extract import module_for_display

    name = module_for_display(path) if module is None else None
    if module is not None:
        name = ModuleName(module, path.endswith("__init__.py"))
    return extract(source, path, name)
