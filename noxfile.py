"""Developer and CI entry points. ``nox -s conformance`` is the main job."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The test suite, against the package as installed from this checkout."""
    session.install(".[test]")
    session.run("pytest", "-q", *session.posargs)


@nox.session(python=PYTHON)
def conformance(session: nox.Session) -> None:
    """Run the conformance kit against the reference (or ``-- --impl ...``)."""
    session.install(".")
    session.run("dshkit", "conformance", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    session.install("ruff>=0.6")
    session.run("ruff", "check", ".")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    session.install("-e", ".[test]", "mypy>=1.11", "types-jsonschema", "nox")
    session.run("mypy")


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Render spec/ to HTML in strict mode (broken links or anchors fail)."""
    session.install("-e", ".", "mkdocs>=1.6", "mkdocs-material>=9.5")
    session.run("python", "-m", "dshkit.spec_index", "--check")
    session.run("mkdocs", "build", "--strict", "--site-dir", "build/site")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks, reported as ratios against baselines measured in the same run."""
    session.install(".", "orjson")
    session.run("python", "bench/run.py", *session.posargs)
