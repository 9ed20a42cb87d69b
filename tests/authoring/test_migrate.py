"""The migrate codemod: raw raises become typed raises, everything else stays as written."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from catalog.authoring.import_style import ImportStyle, read_import_style
from catalog.authoring.migrate import (
    MigrateError,
    Rewrite,
    imports_itself_relatively,
    migrate_source,
)
from extractor.extract import extract_bytes
from extractor.imports import ModuleName

BEFORE = textwrap.dedent('''\
    """A module."""

    from __future__ import annotations

    import torch


    class Pool:
        def copy_tensor(self, tensor):
            # Checked before any CUDA call.
            if not tensor.is_cuda:
                raise ValueError(f"{self.transport_name} requires a CUDA tensor")  # seed 002
            try:
                return tensor.view(-1)
            except RuntimeError as exc:
                raise ValueError(
                    "cannot view "  # the first half
                    f"{tuple(tensor.shape)}"
                ) from exc
''')

AFTER = textwrap.dedent('''\
    """A module."""

    from __future__ import annotations

    import torch

    from runtime.errors import CannotView, TransportRequiresCudaTensor


    class Pool:
        def copy_tensor(self, tensor):
            # Checked before any CUDA call.
            if not tensor.is_cuda:
                raise TransportRequiresCudaTensor(transport_name=self.transport_name)  # seed 002
            try:
                return tensor.view(-1)
            except RuntimeError as exc:
                raise CannotView(tensor_shape=tuple(tensor.shape)) from exc
''')


def test_rewrites_raises_and_adds_one_import() -> None:
    """Both raises are rewritten, comments and the `from` clause stay, the import is added once."""
    rewrites = [
        Rewrite(12, 13, "TransportRequiresCudaTensor", {"transport_name": "self.transport_name"}),
        Rewrite(16, 13, "CannotView", {"tensor_shape": "tuple(tensor.shape)"}),
    ]
    style = ImportStyle(first_party=frozenset({"runtime"}), line_length=100)
    assert migrate_source(BEFORE, rewrites, "runtime.errors", style) == AFTER


def test_a_call_longer_than_the_line_is_wrapped_as_formatters_wrap_it() -> None:
    """Past the project's line length, the arguments go on a line of their own, or one per
    line when even that is too long; the `from` clause and a comment follow the parenthesis."""
    source = "def f(a, b):\n    raise ValueError(f'{a} {b}') from None  # why\n"
    rewrite = Rewrite(2, 5, "AVeryLongClassNameError", {"first": "a", "second": "b"})
    narrow = ImportStyle(first_party=frozenset({"pkg"}), line_length=40)
    assert migrate_source(source, [rewrite], "pkg.errors", narrow).endswith(
        "def f(a, b):\n    raise AVeryLongClassNameError(\n        first=a, second=b\n"
        "    ) from None  # why\n"
    )
    narrower = ImportStyle(first_party=frozenset({"pkg"}), line_length=20)
    assert migrate_source(source, [rewrite], "pkg.errors", narrower).endswith(
        "    raise AVeryLongClassNameError(\n        first=a,\n        second=b,\n"
        "    ) from None  # why\n"
    )


def test_existing_import_is_reused() -> None:
    """A file that already imports the class does not import it twice."""
    source = "from runtime.errors import Boom\n\n\ndef f():\n    raise ValueError('boom')\n"
    after = migrate_source(source, [Rewrite(5, 5, "Boom", {})], "runtime.errors")
    assert after == "from runtime.errors import Boom\n\n\ndef f():\n    raise Boom\n"


def test_no_rewrites_is_identity() -> None:
    """Nothing to do leaves the text byte for byte."""
    assert migrate_source(BEFORE, [], "runtime.errors") == BEFORE


def test_missing_raise_is_an_error() -> None:
    """A rewrite pointing at no raise statement fails instead of silently doing nothing."""
    with pytest.raises(MigrateError, match=r"no raise statement at 3:1"):
        migrate_source(BEFORE, [Rewrite(3, 1, "X", {})], "runtime.errors")


def migrate(source: str, *rewrites: Rewrite) -> str:
    return migrate_source(source, rewrites, "runtime.errors")


def test_bare_class_raise() -> None:
    """`raise Foo` names the class without calling it; the name alone is replaced, and a
    class without parameters is raised bare too. The import is a section of its own after the
    standard library's, as isort sorts it."""
    source = "import os\n\n\ndef f():\n    raise Foo  # bare\n"
    after = migrate(source, Rewrite(5, 5, "Typed", {}))
    assert after == (
        "import os\n\nfrom runtime.errors import Typed\n\n\ndef f():\n    raise Typed  # bare\n"
    )


def test_call_spanning_lines_with_comments_is_replaced_whole() -> None:
    """Comments inside the old call go with it; the `from` clause and what follows stay."""
    source = textwrap.dedent("""\
        import os


        def f(path):
            try:
                os.stat(path)
            except OSError as exc:
                raise ValueError(  # why
                    # the path
                    f"bad {path}",
                ) from exc  # after
            return 1
    """)
    after = migrate(source, Rewrite(8, 9, "BadPath", {"path": "path"}))
    assert after == textwrap.dedent("""\
        import os

        from runtime.errors import BadPath


        def f(path):
            try:
                os.stat(path)
            except OSError as exc:
                raise BadPath(path=path) from exc  # after
            return 1
    """)


def test_crlf_file_keeps_crlf_and_missing_final_newline() -> None:
    """The inserted import uses the file's line ending; no final newline is added."""
    source = "import os\r\n\r\ndef f(n):\r\n    raise ValueError(f'{n}')"
    after = migrate(source, Rewrite(4, 5, "Bad", {"n": "n"}))
    assert after == (
        "import os\r\n\r\nfrom runtime.errors import Bad\r\n\r\ndef f(n):\r\n    raise Bad(n=n)"
    )


def test_insert_after_last_line_without_newline() -> None:
    """An anchor on the last line, with no line ending, gets one before the new import."""
    source = "def f():\n    raise ValueError()\nfrom runtime.errors import (Boom  # c\n)"
    after = migrate(source, Rewrite(2, 5, "X", {}))
    assert after == source.replace("ValueError()", "X") + "\nfrom runtime.errors import X"


def test_statement_after_the_last_import_on_its_line() -> None:
    """A raise after `;` on the import's line runs before a next line could import the name."""
    source = "import os; raise ValueError()\n"
    after = migrate(source, Rewrite(1, 12, "X", {}))
    assert after == "import os; from runtime.errors import X; raise X\n"


def test_non_ascii_before_the_raise_on_its_line() -> None:
    """Columns are characters, as the scanner reports them; `ast` gives UTF-8 byte offsets."""
    source = 'def f(x):\n    s = "é→😀"; raise ValueError(f"{x} ü")  # ñ\n'
    (site,) = extract_bytes(source.encode(), "m.py", ModuleName("m", False)).sites
    assert (site.line, site.column) == (2, 16)
    after = migrate(source, Rewrite(2, 16, "Bad", {"x": "x"}))
    assert after == (
        'from runtime.errors import Bad\n\n\ndef f(x):\n    s = "é→😀"; raise Bad(x=x)  # ñ\n'
    )


def test_merges_into_existing_import() -> None:
    """Missing names join the existing statement, sorted; aliases in it are kept."""
    source = "import os\nfrom runtime.errors import Zed, Alpha as A\n\nraise KeyError('k')\n"
    after = migrate(source, Rewrite(4, 1, "Middle", {}))
    assert after == (
        "import os\nfrom runtime.errors import Alpha as A, Middle, Zed\n\nraise Middle\n"
    )


def test_merged_import_is_wrapped_when_too_long() -> None:
    """Past 100 characters the statement is parenthesized, one name per line."""
    long = ["A" * 30, "B" * 30]
    source = f"from runtime.errors import {long[0]}, {long[1]}  # noqa\nraise ValueError()\n"
    after = migrate(source, Rewrite(2, 1, "C" * 30, {}))
    assert after == (
        "from runtime.errors import (\n"
        f"    {long[0]},\n    {long[1]},\n    {'C' * 30},\n"
        ")  # noqa\n"
        f"raise {'C' * 30}\n"
    )


def test_import_with_comments_inside_is_left_alone() -> None:
    """A parenthesized import holding comments is not rewritten: a new statement follows it."""
    source = "from runtime.errors import (\n    Boom,  # kept\n)\nraise ValueError()\n"
    after = migrate(source, Rewrite(4, 1, "Aha", {}))
    assert after == (
        "from runtime.errors import (\n    Boom,  # kept\n)\n"
        "from runtime.errors import Aha\nraise Aha\n"
    )


def test_type_checking_import_is_no_candidate() -> None:
    """An import only type checkers see binds nothing at run time: a real one is added."""
    source = textwrap.dedent("""\
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from runtime.errors import Bad


        def f():
            raise ValueError()
    """)
    after = migrate(source, Rewrite(8, 5, "Bad", {}))
    assert after == source.replace(
        "TYPE_CHECKING\n", "TYPE_CHECKING\n\nfrom runtime.errors import Bad\n", 1
    ).replace("ValueError()", "Bad")


def test_docstring_and_no_imports() -> None:
    """The import goes after the docstring, set off from it by a blank line."""
    source = '"""Doc\nstring."""\n\n\ndef f():\n    raise ValueError()\n'
    after = migrate(source, Rewrite(6, 5, "Bad", {}))
    assert after == (
        '"""Doc\nstring."""\n\nfrom runtime.errors import Bad\n\n\ndef f():\n    raise Bad\n'
    )


def test_no_docstring_no_imports_after_header_comment() -> None:
    """A shebang and a header comment stay first; a comment on the first statement stays on it."""
    source = "#!/usr/bin/env python\n# Header.\n\n# About f.\ndef f():\n    raise ValueError()\n"
    after = migrate(source, Rewrite(6, 5, "Bad", {}))
    assert after == source.replace("\n\n#", "\n\nfrom runtime.errors import Bad\n\n\n#").replace(
        "ValueError()", "Bad"
    )
    bare = "# About f.\ndef f():\n    raise ValueError()\n"
    assert migrate(bare, Rewrite(3, 5, "Bad", {})) == (
        "from runtime.errors import Bad\n\n\n# About f.\ndef f():\n    raise Bad\n"
    )


@pytest.mark.parametrize(
    "binding",
    [
        "from other import Bad",
        "from runtime.errors import Other as Bad",
        "import Bad",
        "def Bad(): pass",
        "class Bad: pass",
        "Bad = 1",
        "try:\n    pass\nexcept OSError as Bad:\n    pass",
        "def g():\n    global Bad",
    ],
)
def test_name_collision_is_an_error(binding: str) -> None:
    """A class name bound to something else at top level would change what the module means."""
    source = f"{binding}\n\n\ndef f():\n    raise ValueError()\n"
    line = source.count("\n", 0, source.index("raise")) + 1
    with pytest.raises(MigrateError, match=r"^Bad is already bound in this module; rename"):
        migrate(source, Rewrite(line, 5, "Bad", {}))


def test_raise_inside_nested_functions_and_classes() -> None:
    """Raises deep in classes, functions, `with`, `try` and `match` are found."""
    source = textwrap.dedent("""\
        class A:
            class B:
                def f(self, x):
                    def g():
                        with open(x):
                            try:
                                pass
                            finally:
                                match x:
                                    case 1:
                                        raise ValueError(f"{x}")
                    return g
    """)
    after = migrate(source, Rewrite(11, 33, "Deep", {"x": "x"}))
    assert after == "from runtime.errors import Deep\n\n\n" + source.replace(
        'ValueError(f"{x}")', "Deep(x=x)"
    )


def test_two_raises_on_consecutive_lines() -> None:
    """Two rewrites next to each other, including two statements on one line, both apply."""
    source = "def f(a):\n    if a: raise ValueError(a); raise KeyError(a)\n    raise TypeError(a)\n"
    rewrites = [
        Rewrite(2, 11, "One", {"a": "a"}),
        Rewrite(2, 32, "Two", {}),
        Rewrite(3, 5, "Three", {"a": "a"}),
    ]
    after = migrate(source, *rewrites)
    assert after == (
        "from runtime.errors import One, Three, Two\n\n\n"
        "def f(a):\n    if a: raise One(a=a); raise Two\n    raise Three(a=a)\n"
    )


def test_byte_order_mark_is_kept() -> None:
    """The BOM stays first and does not shift the columns of line 1."""
    source = "\ufeffraise ValueError()\n"
    assert migrate(source, Rewrite(1, 1, "Bad", {})) == (
        "\ufefffrom runtime.errors import Bad\n\nraise Bad\n"
    )


def test_bare_reraise_is_an_error() -> None:
    """A bare `raise` has no exception to replace."""
    with pytest.raises(MigrateError, match=r"the raise at 4:5 re-raises"):
        migrate("try:\n    pass\nexcept OSError:\n    raise\n", Rewrite(4, 5, "Bad", {}))


def test_broken_argument_is_an_error() -> None:
    """A rewrite that would not parse fails instead of writing a broken file."""
    with pytest.raises(MigrateError, match=r"the rewritten source does not parse"):
        migrate("raise ValueError()\n", Rewrite(1, 1, "Bad", {"a": "1 +"}))


def test_libcst_is_not_imported() -> None:
    """Import time matters: the module stays on the standard library."""
    code = "import sys, catalog.authoring.migrate; print('libcst' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_the_import_is_sorted_into_the_first_party_section() -> None:
    """Among the package's own imports it goes where isort puts it: `import x` lines first,
    then `from` lines by module; relative imports stay a section of their own after it."""
    source = textwrap.dedent("""\
        import os

        import numpy

        import runtime
        from runtime.alpha import a
        from runtime.zeta import z

        from . import sibling


        def f():
            raise ValueError("boom")
    """)
    after = migrate(source, Rewrite(13, 5, "Boom", {}))
    assert after == source.replace(
        "from runtime.zeta", "from runtime.errors import Boom\nfrom runtime.zeta"
    ).replace('ValueError("boom")', "Boom")
    only_relative = "import os\n\nfrom . import sibling\n\nraise ValueError('x')\n"
    assert migrate(only_relative, Rewrite(5, 1, "Boom", {})) == (
        "import os\n\nfrom runtime.errors import Boom\n\nfrom . import sibling\n\nraise Boom\n"
    )


def test_force_single_line_gives_one_statement_per_name() -> None:
    """Under `force-single-line` names are never merged: each gets a sorted statement."""
    style = ImportStyle(first_party=frozenset({"runtime"}), force_single_line=True)
    source = textwrap.dedent("""\
        from runtime.errors import Alpha
        from runtime.util import helper


        def f(a):
            if a:
                raise ValueError(a)
            raise KeyError(a)
    """)
    rewrites = [Rewrite(7, 9, "Zed", {"a": "a"}), Rewrite(8, 5, "Beta", {"a": "a"})]
    after = migrate_source(source, rewrites, "runtime.errors", style)
    assert after.startswith(
        "from runtime.errors import Alpha\n"
        "from runtime.errors import Beta\n"
        "from runtime.errors import Zed\n"
        "from runtime.util import helper\n"
    )


def test_force_single_line_new_section_is_one_block() -> None:
    """Under `force-single-line`, with no first-party import yet, the statements form one new
    section in order, set off once (not one section per name)."""
    style = ImportStyle(first_party=frozenset({"runtime"}), force_single_line=True)
    source = (
        "import os\n\n\ndef f(a):\n    if a:\n        raise ValueError(a)\n    raise KeyError(a)\n"
    )
    rewrites = [Rewrite(6, 9, "Zed", {"a": "a"}), Rewrite(7, 5, "Beta", {"a": "a"})]
    after = migrate_source(source, rewrites, "runtime.errors", style)
    assert after.startswith(
        "import os\n\nfrom runtime.errors import Beta\nfrom runtime.errors import Zed\n\n\ndef f"
    )


def test_a_message_variable_in_an_except_handler_left_unused_is_removed() -> None:
    """A handler's body, like any block, loses the message variable only its raise read."""
    source = textwrap.dedent("""\
        def f(a):
            try:
                return int(a)
            except ValueError as exc:
                msg = f"bad {a}"
                raise TypeError(msg) from exc
    """)
    assert migrate(source, Rewrite(6, 9, "Bad", {"a": "a"})) == textwrap.dedent("""\
        from runtime.errors import Bad


        def f(a):
            try:
                return int(a)
            except ValueError as exc:
                raise Bad(a=a) from exc
    """)


def test_a_message_variable_left_unused_is_removed() -> None:
    """`msg = f"..."` (and `msg += ...`) read only by the rewritten raise go with it; a
    variable read elsewhere, or assigned with a comment on its line, stays."""
    source = textwrap.dedent("""\
        def f(a, b):
            msg = f"bad {a}"
            msg += f" and {b}"
            raise ValueError(msg)


        def g(a):
            msg = f"bad {a}"
            print(msg)
            raise ValueError(msg)


        def h(a):
            msg = f"bad {a}"  # keep
            raise ValueError(msg)


        def k(a):
            msg = describe(a)
            raise ValueError(msg)
    """)
    rewrites = [
        Rewrite(4, 5, "BadAnd", {"a": "a", "b": "b"}),
        Rewrite(10, 5, "Bad", {"a": "a"}),
        Rewrite(15, 5, "Bad", {"a": "a"}),
        # A message errcat could not read is passed on whole: its variable stays.
        Rewrite(20, 5, "Unread", {"msg": "msg"}),
    ]
    after = migrate(source, *rewrites)
    assert after == textwrap.dedent("""\
        from runtime.errors import Bad, BadAnd, Unread


        def f(a, b):
            raise BadAnd(a=a, b=b)


        def g(a):
            msg = f"bad {a}"
            print(msg)
            raise Bad(a=a)


        def h(a):
            msg = f"bad {a}"  # keep
            raise Bad(a=a)


        def k(a):
            msg = describe(a)
            raise Unread(msg=msg)
    """)


def test_the_projects_sorter_settings_are_read(tmp_path: Path) -> None:
    """ruff's `lint.isort` (pyproject or ruff.toml) and isort's own table decide the
    first-party names, force-single-line and the width; the package is always first-party."""
    (tmp_path / "pyproject.toml").write_text(
        "[tool.ruff]\nline-length = 79\n[tool.ruff.lint.isort]\n"
        'force-single-line = true\nknown-first-party = ["helpers"]\n',
        encoding="utf-8",
    )
    assert read_import_style(tmp_path, "pkg") == ImportStyle(
        frozenset({"pkg", "helpers"}), force_single_line=True, line_length=79
    )
    (tmp_path / "ruff.toml").write_text("[lint.isort]\nforce-single-line = false\n")
    assert read_import_style(tmp_path, "pkg") == ImportStyle(frozenset({"pkg"}))
    (tmp_path / "ruff.toml").unlink()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.isort]\nprofile = "black"\nforce_single_line = true\n', encoding="utf-8"
    )
    assert read_import_style(tmp_path, "pkg") == ImportStyle(
        frozenset({"pkg"}), force_single_line=True, line_length=88
    )
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    (tmp_path / "setup.cfg").write_text("[isort]\nknown_first_party = a,b\n", encoding="utf-8")
    # isort's own width where its settings give none; ruff's (and black's) where ruff's do.
    assert read_import_style(tmp_path, "pkg") == ImportStyle(
        frozenset({"pkg", "a", "b"}), line_length=79
    )
    (tmp_path / "setup.cfg").unlink()
    (tmp_path / "pyproject.toml").write_text("[tool.ruff]\nsrc = ['src']\n", encoding="utf-8")
    assert read_import_style(tmp_path, "pkg").line_length == 88


def test_a_raise_of_a_variable_rewrites_the_call_assigned() -> None:
    """`exc = TypeError(...)` over several lines becomes the typed call; `raise exc from None`
    stays, and so does a later assignment of another name."""
    source = textwrap.dedent("""\
        def f(x):
            try:
                return x.copy()
            except Exception:
                exc = TypeError(
                    "could not copy"
                    f" - got {x!r}"
                )
                raise exc from None
    """)
    rewrite = Rewrite(9, 9, "CouldNotCopyError", {"x": "x"}, via="exc")
    assert migrate_source(source, [rewrite], "pkg.errors") == textwrap.dedent("""\
        from pkg.errors import CouldNotCopyError


        def f(x):
            try:
                return x.copy()
            except Exception:
                exc = CouldNotCopyError(x=x)
                raise exc from None
    """)
    with pytest.raises(MigrateError, match="does not raise err"):
        migrate_source(source, [Rewrite(9, 9, "CouldNotCopyError", {}, via="err")], "pkg.errors")


def test_a_message_variable_read_by_two_rewritten_raises_is_removed() -> None:
    """Two raises of one function reading `msg`, both rewritten: each store goes, since no
    reader is left; with one raise left raw, every store stays."""
    source = textwrap.dedent("""\
        def f(a, b):
            if a:
                msg = "a is set"
                raise ValueError(msg)
            if b:
                msg = "b is " + str(b)
                raise ValueError(msg)
    """)
    rewrites = [Rewrite(4, 9, "AError", {}), Rewrite(7, 9, "BError", {"b": "b"})]
    assert migrate_source(source, rewrites, "pkg.errors") == textwrap.dedent("""\
        from pkg.errors import AError, BError


        def f(a, b):
            if a:
                raise AError
            if b:
                raise BError(b=b)
    """)
    one = migrate_source(source, rewrites[:1], "pkg.errors")
    assert 'msg = "a is set"' in one and "raise AError\n" in one


def test_a_variable_raising_a_class_without_parameters_holds_an_instance() -> None:
    """`exc = ValueError("x"); raise exc` becomes `exc = TheClass()`: the variable holds an
    error, not the class."""
    source = 'def f():\n    exc = ValueError("x")\n    raise exc\n'
    after = migrate_source(source, [Rewrite(3, 5, "XError", {}, via="exc")], "pkg.errors")
    assert "    exc = XError()\n    raise exc\n" in after


def test_a_variable_also_holding_caught_exceptions_rewrites_its_one_built_call() -> None:
    """`best = err` in a handler and `best: Exception = ValueError(...)` as the fallback: the
    annotated call is the one rewritten; the caught binding stays."""
    source = textwrap.dedent("""\
        def f(options, text):
            best: Exception = ValueError(f"no option read {text!r}")
            for option in options:
                try:
                    return option(text)
                except LookupError as err:
                    best = err
            raise best
    """)
    rewrite = Rewrite(8, 5, "NoOptionReadError", {"text": "text"}, via="best")
    after = migrate_source(source, [rewrite], "pkg.errors")
    assert "    best: Exception = NoOptionReadError(text=text)\n" in after
    assert "            best = err\n" in after


def test_a_package_importing_itself_relatively_gets_relative_imports() -> None:
    """In a package whose modules import each other only relatively, the generated classes
    are imported as `from ._errcat_errors import X` (two dots one package down), sorted among
    the relative imports: such a package may be loaded where its own name is not importable."""
    source = textwrap.dedent("""\
        import re

        from . import util
        from .core import Token


        def f(a):
            raise ValueError(f"bad {a}")
    """)
    rewrite = [Rewrite(8, 5, "BadError", {"a": "a"})]
    after = migrate_source(source, rewrite, "pkg._errcat_errors", package="pkg")
    assert after.startswith(
        "import re\n\nfrom . import util\nfrom ._errcat_errors import BadError\n"
        "from .core import Token\n"
    )
    deeper = migrate_source(source, rewrite, "pkg._errcat_errors", package="pkg.sub")
    assert "from .._errcat_errors import BadError\nfrom . import util\n" in deeper
    alone = "def f(a):\n    raise ValueError(f'bad {a}')\n"
    assert migrate_source(
        alone, [Rewrite(2, 5, "BadError", {"a": "a"})], "pkg.e", package="pkg"
    ).startswith("from .e import BadError\n\n\ndef f(a):")
    assert imports_itself_relatively("pkg", ["from .util import x\n", "import os\n"])
    assert not imports_itself_relatively("pkg", ["from .util import x\n", "from pkg.a import b\n"])
    # The package's own style by count: one absolute import among many relative ones, and
    # imports inside functions or docstrings (indented) do not count.
    mostly = ["from . import a\nfrom .b import c\n", "import pkg\n", "def f():\n    import pkg\n"]
    assert imports_itself_relatively("pkg", mostly)
    assert not imports_itself_relatively("pkg", ["import pkg.a\n"])
    assert not imports_itself_relatively("pkg", ["import os\n"])
    assert imports_itself_relatively("pkg", ["import pkgextra\n", "from . import a\n"])
