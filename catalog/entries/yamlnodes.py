"""YAML to plain values, keeping where every value and key came from.

PyYAML's `compose` (safe loader) gives nodes with marks; we build the values ourselves so that a
duplicate key, an alias or an over-deep document is reported at its place instead of being
silently merged, expanded or crashing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import yaml

from catalog.core.errors import FindingsError

JsonPath = tuple[str | int, ...]
"""Keys and list indexes from the document root to a value."""

MAX_DEPTH = 32
"""Deeper nesting is never needed by a catalog and is refused rather than recursed into."""


@dataclass(frozen=True)
class Mark:
    line: int
    """1-based line."""
    column: int
    """1-based column."""


@dataclass
class Document:
    """A parsed YAML document: its value and the mark of each value and key by path."""

    value: object
    values: dict[JsonPath, Mark] = field(default_factory=dict)
    keys: dict[JsonPath, Mark] = field(default_factory=dict)
    problems: list[tuple[JsonPath, Mark, str]] = field(default_factory=list)
    """With `parse_document(..., collect=True)`: each problem confined to one value (a
    duplicate key, a refused tag or scalar), at the path of that value, which is left out (a
    duplicate's first value is kept) instead of failing the whole document."""

    def mark(self, path: JsonPath, *, key: bool = False) -> Mark:
        """The mark of the value at `path` (or its key), else of the nearest enclosing value."""
        table = self.keys if key else self.values
        if path in table:
            return table[path]
        for cut in range(len(path) - 1, -1, -1):
            if path[:cut] in self.values:
                return self.values[path[:cut]]
        return Mark(1, 1)


class YamlProblem(FindingsError):
    """The text is not a catalog-shaped YAML document; `mark` says where. The loader turns it
    into a finding (exit 1)."""

    def __init__(self, mark: Mark, message: str) -> None:
        super().__init__(message)
        self.mark = mark
        self.message = message


def _mark(node: yaml.Node) -> Mark:
    return Mark(node.start_mark.line + 1, node.start_mark.column + 1)


_STANDARD = "tag:yaml.org,2002:"
_PLAIN_TAGS = frozenset(
    _STANDARD + name
    for name in ("null", "bool", "int", "float", "str", "timestamp", "binary", "seq", "map")
)
"""Tags the safe loader resolves by itself; any other tag (`!!python/...`, `!!set`, `!local`)
asks for a type a catalog never holds, so it is refused wherever it appears."""


_STR_TAG = _STANDARD + "str"


def _shown_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(_STANDARD) if tag.startswith(_STANDARD) else tag


_NOT_PRINTABLE = re.compile("[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""A lone surrogate (which cannot be written as UTF-8) or a control character other than tab,
newline and carriage return (which would reach terminals raw)."""


def _bad_character(text: str) -> str | None:
    """The first character of `text` that is no printable text (see _NOT_PRINTABLE), as
    `U+XXXX`, else None."""
    found = _NOT_PRINTABLE.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


class _Loader(yaml.SafeLoader):
    """The safe loader, refusing aliases and over-deep nesting while it composes: PyYAML's
    composer recurses once per level, and each alias would hand back a shared node."""

    depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]  # PyYAML's stub leaves it bare
        where = Mark(event.start_mark.line + 1, event.start_mark.column + 1)
        if isinstance(event, yaml.AliasEvent):
            raise YamlProblem(
                where, "aliases (*name) are not allowed in catalog files; write the value out"
            )
        # The root is composed at depth 1 and built at depth 0: refuse what the builder would.
        if self.depth > MAX_DEPTH:
            raise YamlProblem(where, f"nesting deeper than {MAX_DEPTH} levels")
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class _Builder:
    def __init__(self, document: Document, *, collect: bool = False) -> None:
        self.document = document
        self.collect = collect
        self.seen: set[int] = set()
        # A constructor only for scalars: it knows YAML 1.1's int/float/bool/null resolution.
        self.scalars = yaml.SafeLoader("")

    def refuse(self, path: JsonPath, problem: YamlProblem) -> None:
        """Record `problem` of the value at `path` when collecting; raise it otherwise."""
        if not self.collect:
            raise problem
        self.document.problems.append((path, problem.mark, problem.message))

    def build(self, node: yaml.Node, path: JsonPath, depth: int) -> object:
        if id(node) in self.seen:
            # compose() hands back the anchored node again for each alias: expanding it would
            # let a few lines become gigabytes, so catalogs do not use aliases at all.
            raise YamlProblem(
                _mark(node), "aliases (*name) are not allowed in catalog files; write the value out"
            )
        if depth > MAX_DEPTH:
            raise YamlProblem(_mark(node), f"nesting deeper than {MAX_DEPTH} levels")
        self.document.values[path] = _mark(node)
        self.seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            try:
                return self.scalar(node)
            except YamlProblem as problem:
                self.refuse(path, problem)
                return None
        if node.tag not in _PLAIN_TAGS:
            message = f"tag {_shown_tag(node.tag)} is not allowed in catalog files; remove it"
            self.refuse(path, YamlProblem(_mark(node), message))
            return None
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            result: dict[str, object] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise YamlProblem(
                        _mark(key_node), "merge keys (<<) are not allowed in catalog files"
                    )
                if isinstance(key_node, yaml.ScalarNode):
                    try:
                        key = self.scalar(key_node)
                    except YamlProblem as problem:
                        self.refuse(path, problem)
                        continue
                else:
                    key = self.build(key_node, (*path, "<key>"), depth + 1)
                if not isinstance(key, str):
                    self.refuse(path, YamlProblem(_mark(key_node), f"key {key!r} must be a string"))
                    continue
                if key in result:
                    first = self.document.keys[(*path, key)]
                    message = (
                        f"duplicate key '{key}' (first defined at line {first.line}); keep one"
                    )
                    self.refuse((*path, key), YamlProblem(_mark(key_node), message))
                    continue
                self.document.keys[(*path, key)] = _mark(key_node)
                result[key] = self.build(value_node, (*path, key), depth + 1)
            return result
        raise YamlProblem(_mark(node), f"unsupported YAML node {node.tag}")

    def scalar(self, node: yaml.ScalarNode) -> object:
        if node.tag == _STR_TAG:
            # What the constructor would return for a string, without its dispatch: catalogs
            # are almost all strings.
            if (bad := _bad_character(node.value)) is not None:
                raise YamlProblem(
                    _mark(node), f"{bad} is not printable text; remove the escape that produced it"
                )
            return node.value
        if node.tag not in _PLAIN_TAGS:
            raise YamlProblem(
                _mark(node),
                f"tag {_shown_tag(node.tag)} is not allowed in catalog files; remove it",
            )
        try:
            value = self.scalars.construct_object(node)
        except (ValueError, OverflowError) as exc:
            # PyYAML leaves some bad values to Python: a date like 2024-13-45, an int of more
            # digits than int() accepts.
            reason = str(exc).split(";")[0]  # drop Python's advice on raising its own limit
            raise YamlProblem(_mark(node), f"YAML value {node.value[:40]!r}: {reason}") from None
        if isinstance(value, str) and (bad := _bad_character(value)) is not None:
            raise YamlProblem(
                _mark(node), f"{bad} is not printable text; remove the escape that produced it"
            )
        return value


# PyYAML's stubs leave Resolver.resolve untyped; it returns the tag as a string.
_resolve = cast(Callable[[type, object, object], str], yaml.resolver.Resolver().resolve)


def _c_marks(event: Any) -> tuple[Any, Any]:
    # libyaml's marks are its own class with the same line/column fields (0-based).
    return event.start_mark, event.end_mark


def _compose_fast(text: str) -> yaml.Node | None:
    """Compose the common case from libyaml's events; None means "take the careful path".

    PyYAML's pure-Python scanner is many times slower than libyaml, and catalogs are read on every
    check and build. Anything out of the ordinary (no libyaml, a parse error, an anchor or
    alias, deep nesting, several documents, characters the Python reader refuses) returns None,
    so the pure-Python loader, whose findings are precise, reports it.
    """
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None or yaml.reader.Reader.NON_PRINTABLE.search(text):
        return None
    stack: list[tuple[yaml.Node, list[object]]] = []
    root: yaml.Node | None = None
    documents = 0
    try:
        # Typed as Any: libyaml's events carry its own Mark class, which the stubs keep apart.
        events: Iterable[Any] = yaml.parse(text, Loader=loader)
        for event in events:
            if isinstance(event, yaml.NodeEvent) and (
                event.anchor is not None or isinstance(event, yaml.AliasEvent)
            ):
                return None
            node: yaml.Node
            if isinstance(event, yaml.ScalarEvent):
                tag = event.tag
                if tag is None or tag == "!":
                    tag = _resolve(yaml.ScalarNode, event.value, event.implicit)
                start, end = _c_marks(event)
                node = yaml.ScalarNode(tag, event.value, start, end, style=event.style)
            elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
                if len(stack) >= MAX_DEPTH:
                    return None
                kind = (
                    yaml.SequenceNode
                    if isinstance(event, yaml.SequenceStartEvent)
                    else yaml.MappingNode
                )
                tag = event.tag
                if tag is None or tag == "!":
                    tag = _resolve(kind, None, event.implicit)
                node = kind(tag, [], _c_marks(event)[0], None, flow_style=event.flow_style)
                stack.append((node, []))
                continue
            elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
                node, items = stack.pop()
                if isinstance(node, yaml.MappingNode):
                    node.value = list(zip(items[0::2], items[1::2], strict=True))
                else:
                    node.value = items
                node.end_mark = event.end_mark
            else:
                if isinstance(event, yaml.DocumentStartEvent):
                    documents += 1
                    if documents > 1:
                        return None
                continue
            if stack:
                stack[-1][1].append(node)
            else:
                root = node
    except yaml.YAMLError:
        return None
    return root


def parse_document(text: str, *, collect: bool = False) -> Document:
    """Parse one YAML document with the safe loader; raise YamlProblem with a 1-based mark.

    With `collect`, a problem confined to one value is recorded in `Document.problems` instead
    (see there); what breaks the document as a whole (syntax, aliases, depth) still raises."""
    fast = _compose_fast(text)
    try:
        nodes = [fast] if fast is not None else list(yaml.compose_all(text, Loader=_Loader))
    except yaml.reader.ReaderError as exc:
        # A character YAML refuses (NUL, other controls): the reader gives a character offset.
        before = text[: exc.position]
        where = Mark(before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1)
        raise YamlProblem(
            where, f"YAML syntax: character U+{exc.character:04X} is not allowed; remove it"
        ) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        if "'\\t'" in problem or "\t" in problem:
            problem = "a tab character; indent YAML with spaces"
        elif (
            exc.context
            and exc.context_mark
            and ("end of stream" in problem or "<stream end>" in problem)
        ):
            # Something opened was never closed: the end of the file is no place to look for it.
            mark = exc.context_mark
            opened = exc.context.removeprefix("while scanning ").removeprefix("while parsing ")
            problem = f"the file ends inside {opened} that starts here; close it"
        where = Mark(mark.line + 1, mark.column + 1) if mark is not None else Mark(1, 1)
        raise YamlProblem(where, f"YAML syntax: {problem}") from None
    except yaml.YAMLError as exc:
        raise YamlProblem(Mark(1, 1), f"YAML syntax: {exc}") from None
    if not nodes or nodes[0] is None:
        raise YamlProblem(Mark(1, 1), "empty file; expected a mapping with 'module' and 'errors'")
    if len(nodes) > 1:
        raise YamlProblem(_mark(nodes[1]), "more than one YAML document; keep one per file")
    document = Document(value=None)
    try:
        document.value = _Builder(document, collect=collect).build(nodes[0], (), 0)
    except yaml.MarkedYAMLError as exc:  # a scalar that cannot be constructed, e.g. a bad timestamp
        mark = exc.problem_mark or exc.context_mark
        where = Mark(mark.line + 1, mark.column + 1) if mark is not None else Mark(1, 1)
        raise YamlProblem(where, f"YAML value: {exc.problem or exc}") from None
    except RecursionError:
        raise YamlProblem(Mark(1, 1), f"nesting deeper than {MAX_DEPTH} levels") from None
    return document
