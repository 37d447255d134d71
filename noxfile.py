"""Developer and CI entry points. ``nox -s conformance`` is the main job."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"


@nox.session(python=None)
def tests(session: nox.Session) -> None:
    """The test suite, against the package as installed from this checkout, on the Python
    that runs nox (a fresh machine needs nothing else). The fast tier by default; ``-- --slow``
    adds the slow one (fuzzing, kill -9, wheel builds, long properties, DSH differential), as
    CI runs it."""
    session.install(".[test]")
    session.run("pytest", "-q", "-p", "no:cacheprovider", *session.posargs)


@nox.session(python=PYTHON)
def conformance(session: nox.Session) -> None:
    """Run the conformance kit against the reference (or ``-- --impl ...``); its property
    tests need hypothesis (the ``conformance`` extra)."""
    session.install(".[conformance]")
    session.run("dshkit", "conformance", *session.posargs)


def _cached_copy(session: nox.Session, source: Path, name: str, *,
                 ignore: tuple[str, ...] = ()) -> Path:
    """A copy of ``source`` with its pinned npm packages, in a cache outside the source tree,
    keyed by its lock file (npm ci runs only when the lock changes)."""
    digest = hashlib.sha256((source / "package-lock.json").read_bytes()).hexdigest()[:12]
    target = _cache_root() / f"{name}-{digest}"
    shutil.copytree(source, target, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("node_modules", *ignore))
    if not (target / "node_modules").is_dir():
        session.run("npm", "ci", "--no-audit", "--no-fund", "--prefix", str(target),
                    external=True)
    return target


def _dsh_harness(session: nox.Session) -> Path:
    """harnesses/dsh with its pinned npm packages (DSH 0.1.0-rc.8), in the cache."""
    return _cached_copy(session, Path("harnesses/dsh"), "dsh-harness", ignore=("report.json",))


@nox.session(name="conformance-dsh", python=PYTHON)
def conformance_dsh(session: nox.Session) -> None:
    """The kit against the real DSH (its npm packages, pinned): fails on any result that the
    baseline does not expect and on any baseline entry that no longer fails."""
    session.install(".[conformance]")
    harness = _dsh_harness(session)
    _kit_against(session, f"cmd:node {harness / 'harness.mjs'}", "dsh")


@nox.session(name="differential-dsh", python=PYTHON)
def differential_dsh(session: nox.Session) -> None:
    """The differential property test (reference against the real DSH) with thousands of
    generated logs: ``-- N`` draws N (default 3000); the counts go to
    build/differential-dsh.json."""
    session.install(".[test]")
    harness = _dsh_harness(session)
    Path("build").mkdir(exist_ok=True)
    examples = session.posargs[0] if session.posargs else "3000"
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_dsh_differential.py",
                env={"DSHKIT_DSH_HARNESS": str(harness),
                     "DSHKIT_DIFFERENTIAL_EXAMPLES": examples,
                     "DSHKIT_DIFFERENTIAL_REPORT": "build/differential-dsh.json"})


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff, then the architecture contracts of pyproject's ``[tool.importlinter]`` (the
    reference imports nothing of the kit; only the kit's implementations import the reference
    and the adapters; no import cycle in the kit)."""
    session.install("ruff>=0.6", "import-linter>=2.17")
    session.install("--no-deps", "-e", ".")  # lint-imports reads the installed package's graph
    session.run("ruff", "check", ".")
    session.run("lint-imports", "--no-logo")


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    session.install("-e", ".[test]", "mypy>=1.11", "types-jsonschema", "nox")
    session.run("mypy")


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Render spec/ to HTML in strict mode (broken links or anchors fail), after checking that
    requirements.json is fresh and CHANGELOG.md records every requirement change since the
    last release; then test the built site (version on every page, permalinks, schemas at
    their $id, nothing loaded from the network)."""
    session.install("-e", ".[test]", "mkdocs>=1.6", "mkdocs-material>=9.5")
    session.run("python", "-m", "dshkit.spec_index", "--check")
    session.run("python", "-m", "dshkit.spec_changes", "--check")
    session.run("mkdocs", "build", "--strict", "--site-dir", "build/site",
                env={"NO_MKDOCS_2_WARNING": "1"})
    session.run("pytest", "-q", "-p", "no:cacheprovider", "tests/test_spec_site.py",
                "tests/test_changelog.py", "tests/test_spec_compatibility.py")
    _compliance_site(session)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks, reported as ratios against baselines measured in the same run."""
    session.install(".", "orjson")
    session.run("python", "bench/run.py", *session.posargs)


@nox.session(python=PYTHON)
def hardening(session: nox.Session) -> None:
    """The long reliability run: fuzzing (100,000 inputs per target), kill -9 (200 per
    target), concurrency and the bad-input table; writes build/hardening.json and the figures
    table of spec/hardening.md. ``-- --inputs N --kills K`` for a shorter run."""
    session.install(".[test]")
    session.run("python", "-m", "tests.hardening.run", *session.posargs)


# -- compliance matrix (issue 18): the kit against real implementations -----------------------

REPORTS = Path("compliance/reports")


def _cache_root() -> Path:
    return Path(os.environ.get("DSHKIT_CACHE", Path.home() / ".cache" / "dshkit"))


def _dsh_package_set(session: nox.Session, packages: Path) -> Path:
    """The shared harness code of harnesses/dsh (harness.mjs and lib/) installed with the
    package set of ``packages`` (package.json, its lock and .npmrc), in a cache outside the
    source tree keyed by that lock. npm runs in legacy peer-deps mode: every peer is pinned in
    package.json, and npm adds no unpinned peer of its own."""
    shared = Path("harnesses/dsh")
    digest = hashlib.sha256((packages / "package-lock.json").read_bytes()).hexdigest()[:12]
    target = _cache_root() / f"{packages.name}-harness-{digest}"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy2(shared / "harness.mjs", target / "harness.mjs")
    shutil.copytree(shared / "lib", target / "lib", dirs_exist_ok=True)
    for name in ("package.json", "package-lock.json", ".npmrc"):
        if (packages / name).is_file():
            shutil.copy2(packages / name, target / name)
    if not (target / "node_modules").is_dir():
        session.run("npm", "ci", "--legacy-peer-deps", "--no-audit", "--no-fund",
                    "--prefix", str(target), external=True)
    return target


def _kit_against(session: nox.Session, impl: str, name: str) -> None:
    """The kit against a third party, with the baseline of harnesses/NAME; the reports go to
    build/NAME-report.json and .md, shrunk counterexamples to build/NAME-counterexamples."""
    Path("build").mkdir(exist_ok=True)
    session.run("dshkit", "conformance", "--impl", impl,
                "--baseline", f"harnesses/{name}/baseline.json",
                "--report", f"build/{name}-report.json", "--markdown", f"build/{name}-report.md",
                "--counterexamples", f"build/{name}-counterexamples", *session.posargs)


@nox.session(name="conformance-dsh-next", python=PYTHON)
def conformance_dsh_next(session: nox.Session) -> None:
    """The kit against DSH 0.1.1-rc.2 (harnesses/dsh-0.1.1: the harness code of harnesses/dsh
    with the 0.1.1-rc.2 package set), with its own baseline; the JSON report goes to
    build/dsh-0.1.1-report.json (``compliance/publish.py`` files it under compliance/reports)."""
    session.install(".[conformance]")
    harness = _dsh_package_set(session, Path("harnesses/dsh-0.1.1"))
    _kit_against(session, f"cmd:node {harness / 'harness.mjs'}", "dsh-0.1.1")


def _memento_harness(session: nox.Session) -> Path:
    """harnesses/dsh-memento (our harness code and its pinned Node 22 binary package) in the
    cache, keyed by its lock."""
    return _cached_copy(session, Path("harnesses/dsh-memento"), "dsh-memento-harness",
                        ignore=("baseline.json",))


@nox.session(name="conformance-memento", python=PYTHON)
def conformance_memento(session: nox.Session) -> None:
    """The kit against dsh-memento's memory provider (tag v0.4.4, pinned commit), driven from a
    copy outside the tree that harnesses/dsh-memento/fetch-memento.sh makes (from
    $DSHKIT_MEMENTO_GIT, a local git directory, else a clone). Where no copy can be had the
    session skips, and the published results in compliance/reports stay as they are."""
    import subprocess

    fetched = subprocess.run(["sh", "harnesses/dsh-memento/fetch-memento.sh"],
                             capture_output=True, text=True, check=False)
    if fetched.returncode == 3:
        session.skip("no copy of dsh-memento can be had here (set DSHKIT_MEMENTO_GIT to a git "
                     "directory of PerryLink/dsh-memento); compliance/reports/dsh-memento.json "
                     "keeps the published run (see its .meta.json for date and commit). "
                     + fetched.stderr.strip())
    if fetched.returncode != 0:
        session.error(f"fetch-memento.sh failed: {fetched.stderr.strip()}")
    memento = fetched.stdout.strip().splitlines()[-1]
    session.install(".[conformance]")
    harness = _memento_harness(session)
    _kit_against(session, f"cmd:node {harness / 'harness.mjs'} {memento}", "dsh-memento")


def _compliance_site(session: nox.Session) -> None:
    """The compliance site from compliance/reports into build/site/compliance, its links into
    the spec site built beside it (build/site) made relative."""
    session.run("dshkit", "compliance", "build", "--out", "build/site/compliance",
                "--reports", str(REPORTS), "--spec", "spec", "--spec-site", "..")


@nox.session(python=PYTHON)
def compliance(session: nox.Session) -> None:
    """The spec site and the compliance site built together (build/site and
    build/site/compliance), then their tests, the browser one included: headless Chromium
    (Debian's ``chromium``; skipped, saying so, where it is absent) loads the matrix, follows a
    requirement link into the spec and saves screenshots under build/."""
    session.install("-e", ".[test]", "mkdocs>=1.6", "mkdocs-material>=9.5")
    session.run("mkdocs", "build", "--strict", "--site-dir", "build/site",
                env={"NO_MKDOCS_2_WARNING": "1"})
    _compliance_site(session)
    session.run("pytest", "-q", "-p", "no:cacheprovider", "--slow",
                "tests/test_compliance_site.py", "tests/test_compliance_site_browser.py",
                env={"DSHKIT_SITE": "build/site"})


@nox.session(python=PYTHON)
def mutation(session: nox.Session) -> None:
    """Mutation testing of the session core: seeded sampled mutants of
    reference/session/{surface,folding,checks,invariants,repair,state,fastpath,pipeline}.py,
    each run against the kit's session-log and session-ops suites in a child process that
    imports the mutated module (the working tree is never written). Writes
    build/mutation/report.{json,md}, and the committed copy spec/conformance/mutation.md when
    run with the default sample (160 mutants, seed 14); ``-- --mutants N --seed S`` for
    another sample, written to build/ only."""
    session.install(".[conformance]")
    spec = [] if session.posargs else ["--spec", "spec/conformance/mutation.md"]
    session.run("python", "-m", "tests.mutation.run", *spec, *session.posargs)
