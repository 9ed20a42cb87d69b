"""How MkDocs turns errcat's pages into HTML, and fast: the plugin, the settings errcat's pages
need, and the fast paths (page conversion, highlighting, the theme and navigation caches) that
stand in for MkDocs' own steps where their output is the same."""
