"""`python -m errcat` is the same as the `errcat` console script."""

from errcat import run

run()
