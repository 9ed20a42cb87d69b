"""The theme's templates: compiled code kept between builds, and pure macros evaluated once per
build, with the same text as without either (`catalog.engine.themecache`)."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import jinja2
import pytest
from markupsafe import Markup

from catalog.engine import themecache

LANGUAGES = {
    "languages/en.html": '{% macro t(key) %}{{ {"hello": "Hello", "bye": "Bye"}[key] }}'
    "{% endmacro %}",
    "languages/fr.html": '{% macro t(key) %}{{ {"hello": "Bonjour"}[key] }}{% endmacro %}',
    # As Material's partials/language.html: the language is named by the configuration.
    "language.html": '{% import "languages/" ~ config.lang ~ ".html" as lang %}'
    '{% import "languages/en.html" as fallback %}'
    "{% macro t(key) %}{{ lang.t(key) or fallback.t(key) or key }}{% endmacro %}",
}


class Config(dict[str, Any]):
    """A configuration object as a page's context holds it, read by attribute."""

    def __getattr__(self, name: str) -> Any:
        return self[name]


def _env(templates: dict[str, str], **filters: Any) -> jinja2.Environment:
    # As MkDocs makes the theme's: templates are not reloaded during a build.
    env = jinja2.Environment(loader=jinja2.DictLoader(templates), auto_reload=False)
    env.filters.update(filters)
    return env


def _pages(env: jinja2.Environment, config: object, pages: list[str]) -> list[str]:
    template = env.get_template("page.html")
    return [template.render(config=config, page=page) for page in pages]


def _memoised(templates: dict[str, str], pages: list[str], **filters: Any) -> tuple[int, int]:
    """(pure macro calls, macro runs) over rendering `pages`; the text is checked equal to
    rendering without the memo."""
    config = Config(lang="fr", site="errcat")
    expected = _pages(_env(templates, **filters), config, pages)
    env = _env(templates, **filters)
    themecache.install(env, None, memo=True)
    assert _pages(env, config, pages) == expected
    memo = themecache.memo_of(env)
    assert memo is not None
    return memo.calls, memo.computed


def test_a_pure_macro_runs_once_for_two_pages() -> None:
    """Material's translation lookup, imported with context on every page: the macro runs once
    per key, for both pages."""
    page = (
        '{% import "language.html" as lang with context %}'
        "{{ page }}: {{ lang.t('hello') }} {{ lang.t('bye') }} {{ lang.t('hello') }}"
    )
    calls, computed = _memoised({**LANGUAGES, "page.html": page}, ["one", "two"])
    # language.t: 6 calls, 2 runs; inside those, fr's t for both keys and en's for "bye"
    # (French has no word for it).
    assert calls == 6 + 3 and computed == 2 + 3


def test_a_pure_module_imported_with_context_is_made_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """As jinja shares the module of a template imported without context, the module of a pure
    one imported with it is made once per configuration, not per page; not so for a template
    that reads the page, or one whose names hold a list the importer could change."""
    from jinja2.environment import TemplateModule

    made: list[str] = []
    init = TemplateModule.__init__

    def counted(self: TemplateModule, template: jinja2.Template, *args: Any) -> None:
        made.append(str(template.name))
        init(self, template, *args)

    monkeypatch.setattr(TemplateModule, "__init__", counted)
    templates = {
        **LANGUAGES,
        "impure.html": "{% macro m() %}{{ page }}{% endmacro %}",
        "listed.html": "{% set names = [config.site] %}{% macro m() %}{% endmacro %}",
        "page.html": '{% import "language.html" as lang with context %}'
        '{% import "impure.html" as i with context %}'
        '{% import "listed.html" as l with context %}'
        "{{ lang.t('hello') }} {{ i.m() }} {{ l.names }}",
    }
    _memoised(templates, ["one", "two", "three"])
    # Without the memo, then with it: language.html 3 + 1 times, the language files once
    # each (imported without context), the other two for every page both times.
    assert Counter(made) == {
        "language.html": 3 + 1,
        "languages/fr.html": 1 + 1,
        "languages/en.html": 1 + 1,
        "impure.html": 3 + 3,
        "listed.html": 3 + 3,
    }


def test_keyword_and_positional_arguments_share_a_result() -> None:
    """The key is the arguments as bound: `t('x')` and `t(key='x')` are one call."""
    page = (
        '{% import "language.html" as lang with context %}'
        '{{ lang.t("hello") }}{{ lang.t(key="hello") }}'
    )
    assert _memoised({**LANGUAGES, "page.html": page}, ["one"]) == (2 + 1, 1 + 1)


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("reads the page", "{% macro m(x) %}{{ x }} on {{ page }}{% endmacro %}"),
        ("a context filter", "{% macro m(x) %}{{ x | where }}{% endmacro %}"),
        ("an include", '{% macro m(x) %}{{ x }}{% include "inc.html" %}{% endmacro %}'),
        ("calls its caller", "{% macro m(x) %}{{ x }}{{ caller() }}{% endmacro %}"),
        ("takes varargs", "{% macro m(x) %}{{ x }}{{ varargs }}{% endmacro %}"),
        ("an unknown global", "{% macro m(x) %}{{ x }}{{ now() }}{% endmacro %}"),
        ("the current page", "{% macro m(x) %}{{ x }}{{ config._current_page }}{% endmacro %}"),
        ("plugins' state", "{% macro m(x) %}{{ x }}{{ config.plugins }}{% endmacro %}"),
        ("a computed key", "{% macro m(x) %}{{ config[x] }}{% endmacro %}"),
        ("a random filter", "{% macro m(x) %}{{ [x, 1] | random }}{% endmacro %}"),
        ("a project's filter", "{% macro m(x) %}{{ x | shout }}{% endmacro %}"),
        (
            "an impure import",
            '{% import "impure.html" as i %}{% macro m(x) %}{{ i.m(x) }}{% endmacro %}',
        ),
    ],
)
def test_impure_macros_are_not_memoised(name: str, source: str) -> None:
    """Each of these may render differently from page to page with the same arguments: none
    is memoised, and the pages render as without the memo."""
    from jinja2 import pass_context

    @pass_context
    def where(context: Any, value: object) -> str:
        return f"{value}@{context.get('page')}"

    calls = iter(range(100))

    def now() -> int:
        return next(calls)

    templates = {
        "macros.html": source,
        "inc.html": "[{{ page }}]",
        "impure.html": "{% macro m(x) %}{{ x }}/{{ page }}{% endmacro %}",
        "page.html": '{% import "macros.html" as m with context %}'
        + ('{% call m.m("a") %}c{% endcall %}' if "caller" in source else '{{ m.m("a") }}'),
    }
    env_globals = {"now": now}
    config = Config(lang="en", site="errcat", a="A", b="B", plugins="p", _current_page=0)
    rendered = []
    for memo in (False, True):
        calls = iter(range(100))
        random.seed(0)  # the same choices for both
        env = _env(templates, where=where, shout=str.upper)
        env.globals.update(env_globals)
        if memo:
            themecache.install(env, None, memo=True)
        config["_current_page"] = 0
        out = []
        for page in ("one", "two"):
            config["_current_page"] += 1
            out.append(env.get_template("page.html").render(config=config, page=page))
        rendered.append(out)
        if memo:
            found = themecache.memo_of(env)
            assert found is not None and found.calls == 0, name
    assert rendered[0] == rendered[1]


def test_arguments_that_may_change_call_the_macro() -> None:
    """An object hashed by identity (a navigation item) may change between pages: the macro
    runs for it every time; `1`, `1.0` and `True`, `0.0` and `-0.0`, text and Markup each get
    their own result."""

    class Item:
        def __init__(self) -> None:
            self.active = False

    templates = {
        "m.html": "{% macro show(x) %}[{{ x }}]{% endmacro %}",
        "page.html": '{% import "m.html" as m %}'
        "{{ m.show(item.active) }}{{ m.show(item) }}"
        "{{ m.show(1) }}{{ m.show(1.0) }}{{ m.show(true) }}{{ m.show(0.0) }}{{ m.show(-0.0) }}"
        '{{ m.show("<b>") }}{{ m.show(bold) }}{{ m.show((1, "a")) }}{{ m.show([1]) }}',
    }
    item = Item()
    rendered = []
    for memo in (False, True):
        env = _env(templates)
        env.autoescape = True
        if memo:
            themecache.install(env, None, memo=True)
        out = []
        for active in (False, True):
            item.active = active
            template = env.get_template("page.html")
            out.append(template.render(item=item, bold=Markup("<b>"), config=None))
        rendered.append(out)
        if memo:
            found = themecache.memo_of(env)
            assert found is not None
            # show(item) and show([1]) are never memoised, the other 9 calls per page are: 9
            # results in all (False, then True; 1; 1.0; True as the second; 0.0; -0.0; str;
            # Markup; the tuple).
            assert found.calls == 18 and found.computed == 9
    assert rendered[0] == rendered[1]
    assert "[&lt;b&gt;][<b>]" in rendered[1][0] and "[1][1.0][True][0.0][-0.0]" in rendered[1][0]


def test_each_configuration_object_has_its_own_results() -> None:
    """Two configurations (two builds in one process) do not share results."""
    page = '{% import "language.html" as lang with context %}{{ lang.t("hello") }}'
    env = _env({**LANGUAGES, "page.html": page})
    themecache.install(env, None, memo=True)
    template = env.get_template("page.html")
    assert template.render(config=Config(lang="fr")) == "Bonjour"
    assert template.render(config=Config(lang="en")) == "Hello"


def test_no_memo_where_templates_may_be_reloaded() -> None:
    """With `auto_reload`, a template edited during the build is loaded again: no memo then."""
    env = jinja2.Environment(loader=jinja2.DictLoader(LANGUAGES))
    themecache.install(env, None, memo=True)
    assert themecache.memo_of(env) is None and env.template_class is jinja2.Template


def test_compiled_templates_are_kept_and_found(tmp_path: Path) -> None:
    """The second environment loads the first one's compiled code, and a changed template is
    compiled again."""
    templates = {
        **LANGUAGES,
        "page.html": '{% import "language.html" as l with context %}{{ l.t("bye") }}',
    }
    config = Config(lang="en")
    env = _env(templates)
    themecache.install(env, tmp_path, memo=False)
    assert env.get_template("page.html").render(config=config) == "Bye"
    (folder,) = tmp_path.iterdir()
    assert folder.name.startswith(f"templates-{jinja2.__version__}-")
    assert len(list(folder.iterdir())) == 3  # page, language and en
    compiled: list[str] = []
    original = jinja2.Environment.compile

    def counted(self: jinja2.Environment, source: str, *args: Any, **kwargs: Any) -> Any:
        compiled.append(source)
        return original(self, source, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jinja2.Environment, "compile", counted)
        env = _env({**templates, "page.html": templates["page.html"] + "!"})
        themecache.install(env, tmp_path, memo=False)
        assert env.get_template("page.html").render(config=config) == "Bye!"
    assert compiled == [templates["page.html"] + "!"]


def test_a_folder_it_cannot_write_is_no_cache(tmp_path: Path) -> None:
    """Templates render as ever when the cache folder cannot be made, or turns out to be no
    folder at all when the compiled code is read and written."""
    templates = {
        **LANGUAGES,
        "page.html": '{% import "language.html" as l with context %}{{ l.t("bye") }}',
    }
    blocked = tmp_path / "file"
    blocked.write_text("", encoding="utf-8")
    env = _env(templates)
    themecache.install(env, blocked, memo=False)
    assert env.bytecode_cache is None
    assert env.get_template("page.html").render(config=Config(lang="en")) == "Bye"
    env = _env(templates)
    themecache.install(env, tmp_path / "cache", memo=False)
    assert env.bytecode_cache is not None
    (folder,) = (tmp_path / "cache").iterdir()
    folder.rmdir()
    folder.write_text("", encoding="utf-8")  # opening a file in it fails: not a directory
    assert env.get_template("page.html").render(config=Config(lang="en")) == "Bye"


def test_the_compiled_code_depends_on_the_environment() -> None:
    """An environment set up otherwise keeps its compiled templates in another folder."""
    plain = jinja2.Environment()
    assert themecache.settings_key(plain) == themecache.settings_key(jinja2.Environment())
    assert themecache.settings_key(plain) != themecache.settings_key(
        jinja2.Environment(extensions=["jinja2.ext.do"])
    )
    assert themecache.settings_key(plain) != themecache.settings_key(
        jinja2.Environment(trim_blocks=True)
    )


def test_a_real_site_is_the_same_with_and_without(tmp_path_factory: pytest.TempPathFactory) -> None:
    """torch/optim's catalog built with Material (as `test_build_scale`), its pages themed in
    this process, then in two workers: the files are byte for byte those of a build without
    the template cache and the memo; in this process Material's translations were memoised
    (far fewer runs than calls), and no template was loaded before errcat installed its cache."""
    import test_build_scale as scale
    from helpers import file_digests

    from catalog.engine import ahead

    if scale._torch_optim() is None:
        pytest.skip("torch is not installed")
    root = scale.project.__wrapped__(tmp_path_factory)  # type: ignore[attr-defined]
    install = themecache.install
    seen: list[tuple[jinja2.Environment, list[Any]]] = []

    def spied(env: jinja2.Environment, folder: Path | None, *, memo: bool) -> None:
        seen.append((env, list(env.cache.keys()) if env.cache is not None else []))
        install(env, folder, memo=memo)

    built = []
    for workers in (1, 2):
        scale._drop_cache(root)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(ahead, "worker_count", lambda: workers)  # noqa: B023 (used now)
            patch.setattr(ahead, "PARALLEL_PAGES", 1)
            patch.setattr(themecache, "install", spied)
            built.append(file_digests(scale._build(root)))
    assert [loaded for env, loaded in seen] == [[], []]
    memo = themecache.memo_of(seen[0][0])
    pages = sum(1 for path in built[0] if path.endswith("index.html"))
    assert memo is not None and pages > 100
    assert memo.calls > 10 * pages and memo.computed < 100
    assert any(key[0] == "partials/language.html" for key in memo.results)
    scale._drop_cache(root)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(themecache, "install", lambda env, folder, *, memo: None)
        without = file_digests(scale._build(root))
    assert built[0] == without and built[1] == without
