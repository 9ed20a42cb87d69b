"""Run calls that use a package's public API wrongly and say what each raised.

Run by `bench/adopt.py` with the Python of a suite's environment (3.9 on, so no newer syntax
here), where the package is installed: `python adopt_errors.py PACKAGE < calls.json`, the
calls a JSON list of source strings. Prints one JSON list, per call: the raised class by its
qualified name, `str(exc)`, what a traceback prints last (the class and the message, as
`traceback.format_exception_only` gives them), the entry id a generated class carries (`null` otherwise), and the
package's frames of the traceback, innermost first, each `[path below site-packages, line]`.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
import warnings


def run(package: str, source: str) -> dict:
    top = __import__(package)
    root = os.path.dirname(os.path.dirname(os.path.abspath(top.__file__)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(compile(source, "<call>", "exec"), {})
    except Exception as exc:
        frames = []
        for frame in reversed(traceback.extract_tb(exc.__traceback__)):
            path = os.path.abspath(frame.filename)
            if path.startswith(root + os.sep):
                frames.append([os.path.relpath(path, root).replace(os.sep, "/"), frame.lineno])
        cls = type(exc)
        generated = any(base.__name__ == "CatalogError" for base in cls.__mro__)
        return {
            "call": source,
            "raised": f"{cls.__module__}.{cls.__qualname__}",
            "text": str(exc),
            "printed": "".join(traceback.format_exception_only(cls, exc)).rstrip("\n"),
            "id": cls.id if generated else None,
            "frames": frames,
        }
    return {
        "call": source,
        "raised": None,
        "text": None,
        "printed": None,
        "id": None,
        "frames": [],
    }


if __name__ == "__main__":
    calls = json.load(sys.stdin)
    print(json.dumps([run(sys.argv[1], call) for call in calls]))
