"""errcat's additions to the theme's pages reach base.html, whatever main.html a project writes."""

from __future__ import annotations

import logging

import jinja2
import pytest

from catalog.engine.site_settings import keep_theme_additions

BASE = "<html><head><title>t</title>{% block extrahead %}{% endblock %}\n  </head><body>"
BASE += "{% block scripts %}<script src=bundle.js></script>{% endblock %}\n  </body></html>"
PARTIALS = {
    "partials/errcat-head.html": '<link rel="stylesheet" href="errcat.css">',
    "partials/errcat-scripts.html": '<script src="errcat-match.js"></script>',
}
ERRCAT_MAIN = (
    '{% extends "base.html" %}{% block extrahead %}{{ super() }}{% if not errcat_in_base %}'
    '{% include "partials/errcat-head.html" %}{% endif %}{% endblock %}'
)


def _env(templates: dict[str, str]) -> jinja2.Environment:
    loader = jinja2.DictLoader({"errcat_main.html": ERRCAT_MAIN, **PARTIALS, **templates})
    return jinja2.Environment(loader=loader)


def test_a_main_html_on_base_html_without_super_keeps_errcat_additions() -> None:
    """The additions stand before </head> and </body>, after what the project's blocks hold."""
    main = '{% extends "base.html" %}{% block extrahead %}<meta name="mine">{% endblock %}'
    env = _env({"base.html": BASE, "main.html": main})
    assert keep_theme_additions(env)
    page = env.get_template("main.html").render()
    assert '<meta name="mine"><link rel="stylesheet" href="errcat.css">\n  </head>' in page
    assert '<script src="errcat-match.js"></script>\n  </body>' in page


def test_errcat_main_adds_nothing_twice() -> None:
    """A main.html on errcat_main.html gets each addition once: the layer stands aside."""
    main = '{% extends "errcat_main.html" %}'
    env = _env({"base.html": BASE, "main.html": main})
    assert keep_theme_additions(env)
    assert env.get_template("main.html").render().count("errcat.css") == 1


def test_a_base_html_errcat_cannot_place_them_in_is_a_warning_naming_main_html(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two </head> in base.html: nothing is changed, and the warning names the file and fix."""
    main = '{% extends "base.html" %}'
    env = _env({"base.html": BASE.replace("<body>", "</head><body>"), "main.html": main})
    with caplog.at_level(logging.WARNING, logger="mkdocs.plugins.errcat"):
        assert not keep_theme_additions(env)
    (record,) = caplog.records
    assert "main.html does not extend errcat_main.html" in record.getMessage()
    assert '{% extends "errcat_main.html" %}' in record.getMessage()
    assert "errcat.css" not in env.get_template("main.html").render()


def test_without_errcat_theme_folder_nothing_changes() -> None:
    """Another theme than Material (no errcat_main.html): the loader is left as it was."""
    env = jinja2.Environment(loader=jinja2.DictLoader({"base.html": BASE, "main.html": "x"}))
    loader = env.loader
    assert not keep_theme_additions(env)
    assert env.loader is loader
