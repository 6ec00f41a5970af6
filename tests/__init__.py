"""The sog test suite (a package, so that ``tests`` is ours and not the same-named package a
dependency installs: pgx ships one)."""
