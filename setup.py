"""Build-time guard for the package layout (everything else is in pyproject.toml).

The top-level folders adapters/, conformance/, reference/ and schemas/ are the subpackages
``dshkit.<name>`` through symlinks in src/dshkit/. A checkout made without symlink support
(``core.symlinks=false``, the default of Git for Windows without Developer Mode) holds small
text files there instead, and would otherwise build a wheel without those subpackages.
"""

from __future__ import annotations

from pathlib import Path

from setuptools import setup

LINKED = ("adapters", "conformance", "reference", "schemas")
PACKAGE = Path(__file__).resolve().parent / "src" / "dshkit"

FIX = """\
dshkit: src/dshkit/{names} must be symlinks to the top-level folders of the same name, but
this checkout has plain files there: it was made without symlink support (core.symlinks=false,
the default of Git for Windows).
To fix it:
  1. On Windows, enable Developer Mode (Settings > System > For developers) so that Git may
     create symlinks (or run Git as administrator).
  2. In the checkout: git config core.symlinks true
  3. Recreate the links: delete those files, then: git checkout -- src/dshkit
     (or clone again with: git clone -c core.symlinks=true <url>)
Then build or install again."""


def broken_links() -> list[str]:
    """The linked subpackages that are not a package directory in src/dshkit/."""
    return [name for name in LINKED if not (PACKAGE / name / "__init__.py").is_file()]


if broken := broken_links():
    raise SystemExit(FIX.format(names="{" + ",".join(broken) + "}"))

setup()
