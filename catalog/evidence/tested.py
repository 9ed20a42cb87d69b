"""Pairing test expectations (extractor/expectations.py) with catalog entries: "tested" knowledge.

An expectation pairs with an entry when all of these hold:

1. **Class.** The expected class is the entry's class: its resolved qualified name equals the
   entry's `exception` (a built-in entry `ValueError` accepts `builtins.ValueError`); or it is a
   re-export of it from a package above the defining module (`jinja2.TemplateSyntaxError` for
   `jinja2.exceptions.TemplateSyntaxError`: same class name, the test's module is a leading part
   of the entry's); or, for an entry with a generated class, it names that class: the
   qualified name is `<generated module>.<entry.name>` (any module ending in `.<entry.name>`
   when the generated module is not given). An expectation whose class does not resolve is only
   paired through the generated class's name as written (`errors.OutOfStock` or `OutOfStock`).
   Base classes are not followed: `pytest.raises(Exception)` documents nothing in particular.
2. **Pattern.** The pattern agrees with the entry's template: there is a message the template
   can print on which `re.search(pattern, message)` succeeds (what pytest's `match=` and
   `assertRaisesRegex` do; a KeyError's message is quoted as `str()` quotes it). Three ways
   find such a message, and one is enough:
   - the template rendered with every placeholder replaced by one of a few samples (`7`,
     `abc`, `'x'`, ...) is searched;
   - the pattern is cut into literal runs (escapes undone) and the regex syntax between them
     (gaps: `.*`, `\\d+`, classes, groups...); the runs are placed, in order, inside the
     template's literal text (a run does not straddle a placeholder here), and each gap must
     match exactly the template text it spans there, placeholders in it rendered with a
     sample. Anchors (`^`, `$`, `\\A`, `\\Z`) at the ends are honoured, a top-level `|`
     tries each branch, a leading `(?i)` folds case; zero-width assertions (`\\b`,
     lookarounds) are not checked; back references, verbose patterns and flags elsewhere
     leave only the first way;
   - a pattern that is literal text (lone `.` allowed) may spell out values: `only 2 left`
     agrees with `only {left} left of {sku}`. A value held between two pieces of the
     template's literal text (or by an anchor at the template's end) may be any text on one
     line: the agreement is **strong**, like the two ways above, where the template's own
     literal text is at least half of the pattern (`Expected {a} but got {b}.` does not agree
     with a long message that merely says those words around its own). A value the pattern starts
     or ends in is held by nothing: it may not hold whitespace, and at least 4 characters and
     two thirds of the pattern must remain literal text (`cache for` does not agree with
     `invalid value {value} for the cache`, `'1.0x' is not a valid version` agrees with
     `{version!r} is not a valid version`); such an agreement is **weak**. A template that is
   placeholders only (`{msg}`) prints any text: it agrees with every pattern, least of all.
   A pattern that is not a valid regular expression pairs with nothing.
3. **Uniqueness.** Among the entries of a compatible class, the expectation pairs with the one
   its pattern agrees with strongly, or, when none does, with the one it agrees with weakly,
   or else with the one made of placeholders only;
   when two or more are left it pairs with none: such a pattern, like a missing pattern when
   several entries share the class, says too little to tell which one the test means, and a
   wrong pairing is worse than none. (A missing pattern thus pairs only when the class has
   exactly one entry.)
"""

from __future__ import annotations

import re
import string
import warnings
from collections.abc import Iterable, Sequence
from functools import lru_cache

from catalog.core.exceptions import has_typed_class, is_builtin
from catalog.core.model import Entry
from extractor.expectations import Expectation

SAMPLES = ("7", "abc", "'x'", "1536", "x_y", "ABC", "-1", "7.5", "a b", '"x"', "", "x.y", "/x")
"""Values tried for placeholders: one of them fits most of what a test's wildcard accepts."""


def tested_by_entry(
    entries: Iterable[Entry],
    expectations: Sequence[Expectation],
    *,
    generated_module: str | None = None,
) -> dict[str, tuple[Expectation, ...]]:
    """Entry id -> the expectations paired with it (see the module docstring), by path and line.

    `generated_module` is the dotted module of the generated classes (`runtime.errors`); with it
    a test naming a generated class must name it in that module. Entries without any pairing
    are absent from the result.
    """
    # Every way of matching a class ends in the same class name: index on it, so that a large
    # test suite is not compared with every entry.
    by_class_name: dict[str, list[Entry]] = {}
    for entry in entries:
        names = {entry.exception.rpartition(".")[2]}
        if has_typed_class(entry.exception):
            names.add(entry.name)
        for name in names:
            by_class_name.setdefault(name, []).append(entry)
    paired: dict[str, list[Expectation]] = {}
    for expectation in expectations:
        written = (expectation.qualified_name or expectation.exception).rpartition(".")[2]
        candidates = [
            e
            for e in by_class_name.get(written, ())
            if class_matches(e, expectation, generated_module)
        ]
        if expectation.pattern is None:
            agreeing = candidates
        else:
            compiled = _compile(expectation.pattern)
            if compiled is None:
                continue
            levels = [(agreement(compiled, e), e) for e in candidates]
            agreeing = []
            # The most telling agreement wins: strong, then weak, then a bare placeholder's.
            for wanted in (STRONG, WEAK, ANY):
                agreeing = [e for level, e in levels if level == wanted]
                if agreeing:
                    break
        if len({entry.id for entry in agreeing}) == 1:
            paired.setdefault(agreeing[0].id, []).append(expectation)
    return {
        entry_id: tuple(sorted(found, key=lambda x: (x.path, x.line, x.exception)))
        for entry_id, found in paired.items()
    }


def class_matches(entry: Entry, expectation: Expectation, generated_module: str | None) -> bool:
    """Whether the expected class is the entry's class (rule 1 of the module docstring)."""
    qualified = expectation.qualified_name
    if has_typed_class(entry.exception) and _names_generated(
        entry.name, qualified, expectation.exception, generated_module
    ):
        return True
    if qualified is None:
        return False
    wanted = f"builtins.{entry.exception}" if is_builtin(entry.exception) else entry.exception
    if qualified == wanted:
        return True
    if is_builtin(entry.exception):
        return False
    # A package re-exporting a class of one of its modules: `pkg.Error` for `pkg.sub.Error`.
    module, _, name = wanted.rpartition(".")
    test_module, _, test_name = qualified.rpartition(".")
    return bool(test_module) and test_name == name and module.startswith(test_module + ".")


def _names_generated(
    name: str, qualified: str | None, written: str, generated_module: str | None
) -> bool:
    if qualified is None:
        return written.rpartition(".")[2] == name
    if generated_module is not None:
        return qualified == f"{generated_module}.{name}"
    return qualified.rpartition(".")[2] == name and "." in qualified


@lru_cache(maxsize=4096)
def _compile(pattern: str, flags: int = 0) -> re.Pattern[str] | None:
    """A test's pattern compiled, or None where it is no regular expression. What `re` warns
    of a pattern (`[[]`, a possible nested set) is the test's to hear, not the build's."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return re.compile(pattern, flags)
    except (re.error, OverflowError, RecursionError):
        return None


STRONG = 3
"""The pattern agrees without taking a value the template holds for literal text."""
WEAK = 2
"""The pattern agrees only by starting or ending inside a placeholder's value."""
ANY = 1
"""The template is placeholders only (`{msg}`): it prints whatever the pattern finds."""


def agreement(pattern: re.Pattern[str], entry: Entry) -> int:
    """How well `pattern` finds a message of `entry`'s template: STRONG, WEAK, ANY or 0
    (rule 2)."""
    try:
        pieces = _pieces(entry.message)
    except ValueError:  # a malformed template: the checker reports it
        return 0
    if pieces and all(piece is None for piece in pieces):
        # Only placeholders (`{msg}`): the template prints any text, so every pattern finds one
        # of its messages, but nothing of the template's own is confirmed: the least telling
        # agreement, used only where no entry of the class agrees by its text.
        return ANY
    shapes = [pieces]
    if entry.exception == "KeyError":
        # str(KeyError(text)) is repr(text): the quotes are part of what the test sees.
        shapes.append(["'", *pieces, "'"])
    best = 0
    for shape in shapes:
        literals = _literal_segments(shape)
        if any(pattern.search(sample.join(literals)) for sample in SAMPLES):
            return STRONG
        best = max(best, _runs_agree(pattern, literals))
        if best == STRONG:
            break
    return best


def _pieces(message: str) -> list[str | None]:
    """The template as literal strings and None for each placeholder (raises ValueError)."""
    pieces: list[str | None] = []
    for literal, name, _spec, _conversion in string.Formatter().parse(message):
        if literal:
            pieces.append(literal)
        if name is not None:
            pieces.append(None)
    return pieces


def _literal_segments(pieces: list[str | None]) -> list[str]:
    """The literal text between placeholders: one more segment than placeholders."""
    segments = [""]
    for piece in pieces:
        if piece is None:
            segments.append("")
        else:
            segments[-1] += piece
    return segments


# The pattern, cut into literal runs and gaps ------------------------------------------------

_QUANTIFIER = re.compile(r"[*+?]|\{\d*(?:,\d*)?\}")
_GLOBAL_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")


class _Unsupported(Exception):
    """The pattern uses syntax the run-and-gap reading does not take apart."""


def _atoms(source: str) -> list[tuple[str, str]]:
    """The pattern as atoms: (`lit`, char), (`gap`, regex source), (`bol`|`eol`|`alt`, "")."""
    atoms: list[tuple[str, str]] = []
    index = 0
    length = len(source)
    while index < length:
        char = source[index]
        quantifier = _QUANTIFIER.match(source, index)
        if quantifier is not None and (char != "{" or atoms):
            if not atoms or atoms[-1][0] not in ("lit", "gap"):
                raise _Unsupported
            kind, text = atoms.pop()
            text = re.escape(text) if kind == "lit" else text
            end = quantifier.end()
            if end < length and source[end] in "?+":  # lazy or possessive
                end += 1
            atoms.append(("gap", text + source[index:end]))
            index = end
            continue
        if char == "\\":
            index = _escape(source, index, atoms)
            continue
        if char == "[":
            end = _class_end(source, index)
            atoms.append(("gap", source[index : end + 1]))
            index = end + 1
            continue
        if char == "(":
            end = _group_end(source, index)
            group = source[index : end + 1]
            if group.startswith(("(?=", "(?!", "(?<=", "(?<!")):
                pass  # zero width: not checked (see the module docstring)
            elif group.startswith("(?") and not group.startswith(("(?:", "(?P<")):
                raise _Unsupported  # flags in the middle, conditionals, comments
            else:
                atoms.append(("gap", group))
            index = end + 1
            continue
        if char == ".":
            atoms.append(("gap", "."))
        elif char == "^":
            atoms.append(("bol", ""))
        elif char == "$":
            atoms.append(("eol", ""))
        elif char == "|":
            atoms.append(("alt", ""))
        else:
            atoms.append(("lit", char))
        index += 1
    return atoms


_CONTROL = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}


def _escape(source: str, index: int, atoms: list[tuple[str, str]]) -> int:
    if index + 1 >= len(source):
        raise _Unsupported
    char = source[index + 1]
    if char == "A":
        atoms.append(("bol", ""))
    elif char == "Z":
        atoms.append(("eol", ""))
    elif char in "bB":
        pass  # zero width: not checked
    elif char in "dDwWsS":
        atoms.append(("gap", source[index : index + 2]))
    elif char in _CONTROL:
        atoms.append(("lit", _CONTROL[char]))
    elif char in "xuU":
        size = {"x": 2, "u": 4, "U": 8}[char]
        digits = source[index + 2 : index + 2 + size]
        if len(digits) != size:
            raise _Unsupported
        atoms.append(("lit", chr(int(digits, 16))))
        return index + 2 + size
    elif char.isalnum():
        raise _Unsupported  # back references, octal, \N{...}
    else:
        atoms.append(("lit", char))
    return index + 2


def _class_end(source: str, index: int) -> int:
    end = index + 1
    if end < len(source) and source[end] == "^":
        end += 1
    if end < len(source) and source[end] == "]":
        end += 1
    while end < len(source) and source[end] != "]":
        end += 2 if source[end] == "\\" else 1
    if end >= len(source):
        raise _Unsupported
    return end


def _group_end(source: str, index: int) -> int:
    depth = 0
    end = index
    while end < len(source):
        char = source[end]
        if char == "\\":
            end += 2
            continue
        if char == "[":
            end = _class_end(source, end) + 1
            continue
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return end
        end += 1
    raise _Unsupported


class _Branch:
    """One top-level alternative: literal runs with the gap before each and after the last."""

    def __init__(self, atoms: list[tuple[str, str]]) -> None:
        self.start = bool(atoms) and atoms[0][0] == "bol"
        self.end = bool(atoms) and atoms[-1][0] == "eol"
        body = atoms[int(self.start) : len(atoms) - int(self.end)]
        self.runs: list[str] = []
        self.gaps: list[str] = [""]
        """`gaps[k]` comes before `runs[k]`; the last one follows the last run."""
        for kind, text in body:
            if kind == "lit":
                if len(self.gaps) > len(self.runs):
                    self.runs.append("")
                self.runs[-1] += text
            else:
                if len(self.gaps) == len(self.runs):
                    self.gaps.append("")
                # An anchor inside the pattern is kept as regex syntax, where it rarely matches.
                self.gaps[-1] += {"bol": "^", "eol": "$"}.get(kind, text)
        if len(self.gaps) == len(self.runs):
            self.gaps.append("")


def _branches(source: str) -> tuple[int, list[_Branch]] | None:
    flags = 0
    found = _GLOBAL_FLAGS.match(source)
    if found is not None:
        if "x" in found.group(1):
            return None  # verbose patterns give whitespace another meaning
        for letter in found.group(1):
            flags |= getattr(re, letter.upper()) if letter != "L" else re.LOCALE
        source = source[found.end() :]
    try:
        atoms = _atoms(source)
    except _Unsupported:
        return None
    branches: list[list[tuple[str, str]]] = [[]]
    for atom in atoms:
        if atom[0] == "alt":
            branches.append([])
        else:
            branches[-1].append(atom)
    return flags, [_Branch(branch) for branch in branches]


@lru_cache(maxsize=4096)
def _parsed(source: str) -> tuple[int, list[_Branch]] | None:
    return _branches(source)


def _runs_agree(pattern: re.Pattern[str], segments: list[str]) -> int:
    parsed = _parsed(pattern.pattern)
    if parsed is None:
        return 0
    flags, branches = parsed
    best = 0
    for branch in branches:
        if not branch.runs:
            continue
        if _place(branch, 0, (0, 0), segments, flags, {}):
            return STRONG
        chars = _spelled_chars(branch)
        if chars is not None:
            fold = bool(flags & re.IGNORECASE)
            level = _spelled_out(chars, segments, branch.start, branch.end, fold)
            best = max(best, level)
    return best


def _spelled_chars(branch: _Branch) -> list[str | None] | None:
    """The branch as characters and None for each lone `.`, when that is all it holds."""
    if branch.gaps[0] or branch.gaps[-1]:
        return None
    chars: list[str | None] = list(branch.runs[0])
    for gap, run in zip(branch.gaps[1:-1], branch.runs[1:], strict=True):
        if gap.strip(".") or not gap:
            return None
        chars.extend([None] * len(gap))
        chars.extend(run)
    return chars


_State = tuple[int, str, int, int, int]
"""A state of `_spelled_out`'s automaton: (node, mode, head, value, spent)."""


def _spelled_out(
    run: list[str | None], segments: list[str], start: bool, end: bool, fold: bool
) -> int:
    """How well a pattern that is literal text (`run`; None for a `.`) is found in a message of
    the template, the placeholders' values spelled out in it (`only 2 left` in
    `only {left} left`): STRONG, WEAK or 0.

    Read as an automaton over the template's characters and placeholders. A value between two
    pieces of literal text may be anything on one line (STRONG), while the template's literal
    text is at least half of the run: a template of short pieces (`Expected {a} but got {b}.`)
    would otherwise take in any message that says those words around its own. A value the
    run starts or ends in has nothing of the template around it to hold it in place: it may
    not hold whitespace, what the run spends on values must leave at least 4 characters and
    two thirds of the run to literal text, and the agreement is WEAK.
    """
    nodes: list[str | None] = list(segments[0])
    for segment in segments[1:]:
        nodes.append(None)
        nodes.extend(segment)
    size = len(nodes)
    if fold:
        run = [None if char is None else char.casefold() for char in run]
        nodes = [None if node is None else node.casefold() for node in nodes]
    # A state: (node, mode, head, value). Modes: `H` inside a value before any literal text
    # was matched; `S` at a literal character before any was; `L` after one was (inside a
    # value: no whitespace in it so far); `W` inside a value that holds whitespace; `E` and
    # `X` just past a value (of `L` and `W`) at the next node. `head` counts the characters of
    # the value the run starts in, `value` those of the value the state is in or just left,
    # `spent` those of every value so far.
    states: set[_State]
    if start:
        # A value the template starts with is held in place by the anchor: not a head.
        states = {(0, "L" if nodes and nodes[0] is None else "S", 0, 0, 0)}
    else:
        states = {(i, "S" if node is not None else "H", 0, 0, 0) for i, node in enumerate(nodes)}
    states = _closure(states, nodes)
    for char in run:
        after: set[_State] = set()
        for index, mode, head, value, spent in states:
            if index == size:
                continue
            node = nodes[index]
            if node is not None:
                if node == char or (char is None and node != "\n"):
                    after.add((index + 1, "L", head, 0, spent))
            elif mode == "H":
                if char is None or not char.isspace():
                    after.add((index, "H", head + 1, 0, spent + 1))
            elif char != "\n":
                if mode in ("E", "X"):  # two placeholders in a row: into the next value
                    value = 0
                spaced = mode in ("W", "X") or (char is not None and char.isspace())
                after.add((index, "W" if spaced else "L", head, value + 1, spent + 1))
        states = _closure(after, nodes)
        if not states:
            return 0
    best = 0
    for index, mode, head, value, spent in states:
        if end:
            # The anchor holds a value the template ends with in place.
            if index != size or mode not in ("L", "E", "X"):
                continue
            absorbed = head
        elif mode == "L":
            absorbed = head + (value if index < size and nodes[index] is None else 0)
        elif mode == "E":
            absorbed = head + value
        else:
            continue
        literal = len(run) - spent
        if not absorbed and 2 * literal >= len(run):
            return STRONG
        if literal >= 4 and 3 * literal >= 2 * len(run):
            best = WEAK
    return best


def _closure(states: set[_State], nodes: list[str | None]) -> set[_State]:
    """`states` with every way of ending the value of a placeholder one is inside."""
    pending = list(states)
    done = set(states)
    while pending:
        index, mode, head, value, spent = pending.pop()
        if index < len(nodes) and nodes[index] is None and mode != "S":
            if mode == "H":
                # A head value leads to literal text still unmatched, or to the next
                # placeholder's value, still a head.
                following_is_value = index + 1 < len(nodes) and nodes[index + 1] is None
                following = (index + 1, "H" if following_is_value else "S", head, 0, spent)
            else:
                left = "X" if mode in ("W", "X") else "E"
                following = (index + 1, left, head, value, spent)
            if following not in done:
                done.add(following)
                pending.append(following)
    return done


def _place(
    branch: _Branch,
    run: int,
    after: tuple[int, int],
    segments: list[str],
    flags: int,
    memo: dict[tuple[int, tuple[int, int]], bool],
) -> bool:
    """Whether runs `run...` fit in order from position `after` (segment, offset).

    Memoised on (run, position): repeated runs (`a.a.a.a`) would otherwise try every
    combination of their places."""
    key = (run, after)
    if key not in memo:
        memo[key] = _try_place(branch, run, after, segments, flags, memo)
    return memo[key]


def _try_place(
    branch: _Branch,
    run: int,
    after: tuple[int, int],
    segments: list[str],
    flags: int,
    memo: dict[tuple[int, tuple[int, int]], bool],
) -> bool:
    if run == len(branch.runs):
        end = (len(segments) - 1, len(segments[-1]))
        return _gap_fits(branch.gaps[run], segments, after, end, flags, "end", branch.end)
    literal = re.compile(f"(?=({re.escape(branch.runs[run])}))", flags)
    mode = "start" if run == 0 else "inner"
    anchored = branch.start if run == 0 else True
    for segment in range(after[0], len(segments)):
        begin = after[1] if segment == after[0] else 0
        for found in literal.finditer(segments[segment], begin):
            here = (segment, found.start())
            if not _gap_fits(branch.gaps[run], segments, after, here, flags, mode, anchored):
                continue
            if _place(branch, run + 1, (segment, found.end(1)), segments, flags, memo):
                return True
    return False


def _gap_fits(
    gap: str,
    segments: list[str],
    start: tuple[int, int],
    end: tuple[int, int],
    flags: int,
    mode: str,
    anchored: bool,
) -> bool:
    """Whether `gap` can match the template text from `start` to `end`.

    Between runs (and at an anchored end) the gap must match all of it; before the first run
    of an unanchored pattern it need only match a tail of it, after the last run a head.
    """
    if not anchored and not gap:
        return True
    parts = _between(segments, start, end)
    # A piece that is not a regex on its own (a named group used twice) compiles to None.
    whole = mode == "inner" or mode == "start" or anchored
    compiled = _compile(f"(?:{gap})\\Z" if whole else f"(?:{gap})", flags)
    if compiled is None:
        return False
    match = compiled.search if mode == "start" and not anchored else compiled.match
    tries = SAMPLES if len(parts) > 1 else ("",)
    return any(match(sample.join(parts)) for sample in tries)


def _between(segments: list[str], start: tuple[int, int], end: tuple[int, int]) -> list[str]:
    """The literal text from `start` to `end`, split where placeholders come."""
    (first, offset), (last, stop) = start, end
    if first == last:
        return [segments[first][offset:stop]]
    return [segments[first][offset:], *segments[first + 1 : last], segments[last][:stop]]
