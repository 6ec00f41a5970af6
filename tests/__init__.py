"""The sog test suite (a package, so that ``tests`` is ours and not a same-named package a dependency installs: pgx ships one)."""
