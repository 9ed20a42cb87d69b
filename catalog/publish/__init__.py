"""`errcat build`: the locked, atomic build that composes the docs folder, runs MkDocs with the
API files written beside it, and publishes the new site in one rename."""
