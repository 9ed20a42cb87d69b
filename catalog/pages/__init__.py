"""What errcat's pages and API documents say: everything a site holds, computed from the
project (`content`), the Markdown pages from jinja2 templates (`templating`, `blocks`,
`markdown`), the JSON API documents, their schema and OpenAPI description (`api`, `openapi`,
`deploy`), and the theme folder. Independent of the engine that turns the pages into HTML."""

from pathlib import Path

THEME_FOLDER = Path(__file__).resolve().parent / "theme"
"""errcat's Material theme folder (`custom_dir`), shipped with the package (never a docs_dir
folder of the project's, so an installed errcat serves every project the same pages)."""
