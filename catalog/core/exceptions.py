"""Which exception classes an entry may name, and which of them get a generated typed class.

An entry's `exception` is either a built-in's name (`ValueError`) or the qualified name of any
other class (`packaging.version.InvalidVersion`, `torch.cuda.OutOfMemoryError`). Only built-ins
get a generated class, and only those where subclassing changes nothing a caller can observe:

- the class exists on every Python the generated module serves (3.7 and later), so
  `EncodingWarning` (3.10) or `ExceptionGroup` (3.11) are catalogued in place;
- it derives from `Exception`: `CatalogError` is an `Exception`, so a typed `SystemExit` would
  start being caught by `except Exception`;
- it is built from its message alone: the `Unicode*Error` classes take five arguments.

Every other entry is catalogued in place: its raise sites stay as written, and `errcat check`
matches them by their resolved class and their message.
"""

from __future__ import annotations

import builtins
import keyword
import re

OLDEST_PYTHON = (3, 7)
"""The oldest Python the generated module runs on."""

BUILTIN_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException) and not name.startswith("_")
)
"""Every built-in exception class of the Python errcat runs on."""

_OLDEST_PYTHON_EXCEPTIONS = frozenset(
    [
        "ArithmeticError",
        "AssertionError",
        "AttributeError",
        "BaseException",
        "BlockingIOError",
        "BrokenPipeError",
        "BufferError",
        "BytesWarning",
        "ChildProcessError",
        "ConnectionAbortedError",
        "ConnectionError",
        "ConnectionRefusedError",
        "ConnectionResetError",
        "DeprecationWarning",
        "EOFError",
        "EnvironmentError",
        "Exception",
        "FileExistsError",
        "FileNotFoundError",
        "FloatingPointError",
        "FutureWarning",
        "GeneratorExit",
        "IOError",
        "ImportError",
        "ImportWarning",
        "IndentationError",
        "IndexError",
        "InterruptedError",
        "IsADirectoryError",
        "KeyError",
        "KeyboardInterrupt",
        "LookupError",
        "MemoryError",
        "ModuleNotFoundError",
        "NameError",
        "NotADirectoryError",
        "NotImplementedError",
        "OSError",
        "OverflowError",
        "PendingDeprecationWarning",
        "PermissionError",
        "ProcessLookupError",
        "RecursionError",
        "ReferenceError",
        "ResourceWarning",
        "RuntimeError",
        "RuntimeWarning",
        "StopAsyncIteration",
        "StopIteration",
        "SyntaxError",
        "SyntaxWarning",
        "SystemError",
        "SystemExit",
        "TabError",
        "TimeoutError",
        "TypeError",
        "UnboundLocalError",
        "UnicodeDecodeError",
        "UnicodeEncodeError",
        "UnicodeError",
        "UnicodeTranslateError",
        "UnicodeWarning",
        "UserWarning",
        "ValueError",
        "Warning",
        "ZeroDivisionError",
    ]
)
"""The built-in exception classes of Python 3.7 (the oldest served), listed once by hand."""

EVERY_BUILTIN_EXCEPTION = _OLDEST_PYTHON_EXCEPTIONS | frozenset(
    ["BaseExceptionGroup", "EncodingWarning", "ExceptionGroup", "PythonFinalizationError"]
)
"""The built-in exception classes of any Python from 3.7 to 3.13, whichever errcat runs on
(what a pasted traceback may name; the search box's script lists the same names)."""

_NOT_FROM_MESSAGE = frozenset({"UnicodeDecodeError", "UnicodeEncodeError", "UnicodeTranslateError"})

TYPED_BUILTINS = frozenset(
    name
    for name in _OLDEST_PYTHON_EXCEPTIONS & BUILTIN_EXCEPTIONS
    if issubclass(getattr(builtins, name), Exception) and name not in _NOT_FROM_MESSAGE
)
"""Built-ins whose entries get a generated typed class."""

_QUALIFIED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\Z")


def is_builtin(exception: str) -> bool:
    """Whether an entry's `exception` names a built-in (written without `builtins.`)."""
    return exception in BUILTIN_EXCEPTIONS


def has_typed_class(exception: str, generate: bool = True) -> bool:
    """Whether entries of `exception` get a generated class (see the module docstring);
    never under `generate=False` (`[tool.errcat] generated = false`: every entry in place)."""
    return generate and exception in TYPED_BUILTINS


def exception_problem(exception: str) -> str | None:
    """Why `exception` cannot be an entry's exception, or None when it can."""
    if exception in BUILTIN_EXCEPTIONS:
        return None
    if exception.startswith("builtins.") and exception.removeprefix("builtins.") in (
        BUILTIN_EXCEPTIONS
    ):
        return f"write the built-in as {exception.removeprefix('builtins.')}"
    if _QUALIFIED.match(exception) and not any(keyword.iskeyword(p) for p in exception.split(".")):
        return None
    if "." not in exception:
        return (
            f"{exception} is not a built-in exception; name any other class by its qualified "
            f"name (package.module.{exception})"
        )
    return f"{exception!r} is not a qualified class name"


def site_exception(qualified_name: str | None) -> str | None:
    """The entry `exception` for a site's resolved class: `builtins.X` gives `X`."""
    if qualified_name is None:
        return None
    if qualified_name.startswith("builtins."):
        name = qualified_name.removeprefix("builtins.")
        return name if name in BUILTIN_EXCEPTIONS else None
    return qualified_name


def class_attributes(exception: str) -> frozenset[str]:
    """Public attributes an instance of the built-in already has (`errno` on OSError)."""
    value = getattr(builtins, exception, None)
    if not isinstance(value, type):
        return frozenset()
    return frozenset(name for name in dir(value) if not name.startswith("_"))


BASE_PARAMETERS = frozenset(
    {"id", "template", "docs_url", "params", "args", "with_traceback", "add_note"}
)
"""Attributes every generated exception has; a parameter of that name would shadow one."""


def reserved_parameters(exception: str) -> frozenset[str]:
    """Names a placeholder of an entry of `exception` may not use as its root.

    Parameters become attributes of the generated class, so they must not shadow what the class
    already has: errcat's own attributes and the built-in's (`errno` on OSError). Entries
    catalogued in place get no class, and their placeholders name nothing.
    """
    if not has_typed_class(exception):
        return frozenset()
    return BASE_PARAMETERS | class_attributes(exception)
