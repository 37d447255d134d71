"""The hardening harness of issue 9: the bad-input table, fuzz targets, kill -9 and
concurrency drivers, and the runner behind ``nox -s hardening`` (``python -m
tests.hardening.run``). Imported as ``hardening`` by the tests and as ``tests.hardening`` by
the runner, so every import inside the package is relative."""
