"""The records and plumbing every stage shares: the project's configuration and import names,
ids, the entry and finding records, message placeholders, which exception classes an entry may
name, cache files, worker processes and the confined child that runs a package's code.

Nothing here imports another stage of `catalog`."""
