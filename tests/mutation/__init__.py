"""Mutation testing of the session core against the conformance kit (``nox -s mutation``).

:mod:`.operators` finds the mutants of a source file (small AST operators of our own),
:mod:`.child` runs the kit with one module replaced by its mutated source (an import hook: the
working tree is never written), :mod:`.run` samples mutants with a seed, runs them in sequence
and writes the JSON and Markdown report; ``equivalent.json`` lists the mutants judged
equivalent, each with its reason.
"""
