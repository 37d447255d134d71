"""The implementations the kit ships, and the only part of the kit that imports
:mod:`dshkit.reference` or :mod:`dshkit.adapters` (an import-linter contract in
pyproject.toml keeps it so): ``reference`` binds the dshkit reference to every suite.

The rest of the kit never imports this package; ``--impl reference`` loads it by name, so the
kit runs against another implementation when the reference cannot be imported.
"""
