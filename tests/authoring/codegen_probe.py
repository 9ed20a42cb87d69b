"""Probe every class of a generated module for what callers of its built-in rely on.

Run as `python codegen_probe.py FOLDER MODULE` on any Python the module serves (3.7 on, so no
syntax newer than 3.7 here); prints one JSON object: the classes probed and every failure, each
`ClassName: what differs`. tests/authoring/test_codegen_dropin.py runs it on several Pythons;
`bench/` or a person can run it on any generated module.

Each class is raised with a `threading.Lock` among its values (inside an attribute placeholder's
object when the class has no plain parameter), the value pickle refuses most often in practice.
"""

from __future__ import annotations

import concurrent.futures
import copy
import importlib
import json
import multiprocessing
import os
import pickle
import string
import sys
import threading
import types

LOCK_PARAMETER = "lock_holder"
"""The attribute that carries the lock on an attribute placeholder's object."""


def builtin_of(cls: type) -> type:
    return next(c for c in cls.__mro__ if c.__module__ == "builtins")


def parameters(cls: type) -> list:
    """The class's keyword parameters, read from its template as a caller would: the root of
    each placeholder, in order."""
    fields = [field for _, field, _, _ in string.Formatter().parse(cls.template) if field]
    roots = [field.split(".")[0].split("[")[0] for field in fields]
    return sorted(set(roots), key=roots.index)


def sample(cls: type) -> dict:
    """Keyword values for `cls`: the first plain parameter is a lock; an attribute placeholder's
    root is an object carrying those attributes (and a lock when no plain parameter has one)."""
    fields = [field for _, field, _, _ in string.Formatter().parse(cls.template) if field]
    attributes: dict = {}
    for field in fields:
        root, _, rest = field.partition(".")
        if rest:
            attributes.setdefault(root, {})[rest.split(".")[0]] = "<" + field + ">"
    values: dict = {}
    locked = False
    for name in parameters(cls):
        if name in attributes:
            values[name] = types.SimpleNamespace(**attributes[name])
        elif not locked:
            values[name] = threading.Lock()
            locked = True
        else:
            values[name] = "<" + name + ">"
    if not locked:
        for value in values.values():
            setattr(value, LOCK_PARAMETER, threading.Lock())
            break
    return values


def picklable(value: object) -> bool:
    try:
        pickle.dumps(value)
    except Exception:
        return False
    return True


def same_as_builtin(error: BaseException, builtin: type, text: object) -> list:
    """How `error` differs from `builtin(text)` in str, repr and args."""
    expected = builtin(text)
    return [
        f"{what} {mine!r} != the built-in's {theirs!r}"
        for what, mine, theirs in (
            ("str", str(error), str(expected)),
            ("repr", repr(error), repr(expected)),
            ("args", error.args, expected.args),
        )
        if mine != theirs
    ]


def same_error(clone: BaseException, error: BaseException, how: str, *, shallow: bool) -> list:
    """How `clone` (a copy of `error` made by `how`) differs from it: unpicklable values may
    have become their text, except in a shallow copy, which keeps every value as it is."""
    problems = []
    if type(clone) is not type(error):
        problems.append(f"{how}: type {type(clone).__name__}")
    for what in ("args", "__notes__"):
        if getattr(clone, what, None) != getattr(error, what, None):
            problems.append(f"{how}: {what} {getattr(clone, what, None)!r}")
    if (str(clone), repr(clone)) != (str(error), repr(error)):
        problems.append(f"{how}: str/repr {str(clone)!r} / {repr(clone)!r}")
    for name, value in error.params.items():
        kept = (clone.params.get(name), getattr(clone, name, None))
        if shallow:
            right = kept[0] is value and kept[1] is value
        else:
            expected = value if picklable(value) else str(value)
            right = kept[0] == expected and kept[1] == expected
        if not right:
            problems.append(f"{how}: parameter {name} arrived as {kept[0]!r}")
    return problems


def raise_in_child(module: str, name: str) -> None:
    """Run in another process: raise the class with a lock among its values."""
    cls = getattr(importlib.import_module(module), name)
    raise cls(**sample(cls))


def describe_in_child(error: BaseException) -> dict:
    """Run in another process: what arrived."""
    return {
        "type": type(error).__name__,
        "args": list(error.args),
        "str": str(error),
        "repr": repr(error),
        "notes": getattr(error, "__notes__", None),
        "params": {k: str(v) for k, v in error.params.items()},
    }


def probe_class(cls: type, base: type) -> list:
    """Every failure of one class, each as a line."""
    problems: list = []
    builtin = builtin_of(cls)
    values = sample(cls)
    error = cls(**values)
    if not isinstance(error, builtin) or not isinstance(error, base):
        problems.append(f"not both a {builtin.__name__} and a CatalogError")
    try:
        raise error
    except builtin as caught:
        if caught is not error:
            problems.append(f"except {builtin.__name__} caught another error")
    problems += same_as_builtin(error, builtin, error.args[0])
    if issubclass(builtin, KeyError) and str(error) != repr(error.args[0]):
        problems.append(f"str {str(error)!r} is not quoted as KeyError quotes it")
    if error.args != (cls.template.format(**values),):
        problems.append(f"args {error.args!r} are not the rendered message")
    for name, value in values.items():
        if getattr(error, name) is not value:
            problems.append(f"attribute {name} is not the value passed")
    if bool(getattr(error, "__notes__", None)) != bool(cls.docs_url):
        problems.append(f"notes {getattr(error, '__notes__', None)!r} for {cls.docs_url!r}")
    if not parameters(cls):
        try:
            raise cls
        except builtin as bare:
            problems += same_as_builtin(bare, builtin, cls.template)
    for text in (f"config.yaml: {error}", str(error), ""):
        try:
            rewrapped = cls(text)
        except TypeError as exc:
            problems.append(f"type(e)({text!r}) raised {exc!r}")
            continue
        problems += [f"type(e)({text!r}): {p}" for p in same_as_builtin(rewrapped, builtin, text)]
        if type(rewrapped) is not cls or rewrapped.params != {}:
            problems.append(f"type(e)({text!r}) is {rewrapped!r} with {rewrapped.params}")
    again = cls(*error.args)
    if (str(again), repr(again), again.args) != (str(error), repr(error), error.args):
        problems.append("type(e)(*e.args) differs from e")
    problems += same_error(copy.copy(error), error, "copy.copy", shallow=True)
    problems += same_error(copy.deepcopy(error), error, "copy.deepcopy", shallow=False)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        try:
            clone = pickle.loads(pickle.dumps(error, protocol))
        except Exception as exc:
            problems.append(f"pickle protocol {protocol}: {exc!r}")
            continue
        problems += same_error(clone, error, f"pickle protocol {protocol}", shallow=False)
    return problems


def probe_across_processes(module: object, classes: list) -> dict:
    """Each class raised in a spawned process reaches this one, and each error sent there
    arrives whole: the failures by class name."""
    problems: dict = {}
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        raised = {
            cls: pool.submit(raise_in_child, module.__name__, cls.__name__) for cls in classes
        }
        errors = {cls: cls(**sample(cls)) for cls in classes}
        sent = {cls: pool.submit(describe_in_child, errors[cls]) for cls in classes}
        for cls in classes:
            found = problems.setdefault(cls.__name__, [])
            arrived = raised[cls].exception(timeout=60)
            if type(arrived) is not cls:
                found.append(f"raised in a child, arrived as {arrived!r}")
            else:
                if getattr(arrived, "__notes__", None) != getattr(errors[cls], "__notes__", None):
                    found.append(f"raised in a child: notes {arrived.__notes__!r}")
                texts = [v for v in arrived.params.values() if isinstance(v, str)]
                if parameters(cls) and not any("lock" in text for text in texts):
                    found.append(f"raised in a child: the lock's text is lost: {arrived.params}")
            try:
                seen = sent[cls].result(timeout=60)
            except Exception as exc:
                found.append(f"sent to a child: {exc!r}")
                continue
            expected = describe_in_child(errors[cls])
            if seen != expected:
                found.append(f"sent to a child, arrived as {seen!r}, not {expected!r}")
    return problems


def main(folder: str, name: str) -> dict:
    sys.path.insert(0, folder)
    module = importlib.import_module(name)
    classes = [module.BY_ID[entry_id] for entry_id in module.BY_ID]
    failures = []
    for cls in classes:
        try:
            problems = probe_class(cls, module.CatalogError)
        except Exception as exc:
            problems = [f"the probe stopped at {exc!r}"]
        failures += [f"{cls.__name__}: {p}" for p in problems]
    for cls_name, problems in probe_across_processes(module, classes).items():
        failures += [f"{cls_name}: {p}" for p in problems]
    return {
        "version": list(sys.version_info[:2]),
        "classes": [cls.__name__ for cls in classes],
        "failures": failures,
        "links": os.environ.get("ERRCAT_DOCS_LINKS", "1"),
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])))
