"""Run ``dshkit conformance`` with one module replaced by a mutant's source.

    python -m tests.mutation.child MUTANT.json KIT-ARGUMENTS...

``MUTANT.json`` is ``{"module", "path", "source"}`` (``module`` may be ``null``: no module is
replaced, the run is the baseline), or ``{"probe": [modules...]}``: run the kit unchanged and
then print, as JSON on the last line of stdout, which of those modules it imported. An import
hook serves the mutated source for the module's name, so no file is written anywhere; the
exit status is the kit's.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import json
import sys
import types
from collections.abc import Sequence
from pathlib import Path


class _MutantLoader(importlib.abc.Loader):
    def __init__(self, path: str, source: str) -> None:
        self.path = path
        self.source = source

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        module.__file__ = self.path
        exec(compile(self.source, self.path, "exec"), module.__dict__)


class _MutantFinder(importlib.abc.MetaPathFinder):
    def __init__(self, module: str, path: str, source: str) -> None:
        self.module = module
        self.loader = _MutantLoader(path, source)

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.module:
            return None
        return importlib.util.spec_from_loader(fullname, self.loader, origin=self.loader.path)


def main(argv: Sequence[str]) -> int:
    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    if spec.get("module"):
        sys.meta_path.insert(0, _MutantFinder(spec["module"], spec["path"], spec["source"]))
    from dshkit.conformance.console import main as kit

    status = kit(list(argv[1:]))
    if "probe" in spec:
        sys.stdout.flush()
        print(json.dumps({"imported": [m for m in spec["probe"] if m in sys.modules]}))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
