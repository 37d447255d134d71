"""The dshkit conformance kit (importable as ``dshkit.conformance``).

Modules, by job:

- ``vectors`` (loading cases), ``registry`` (suite discovery), ``suites/`` (one module per
  suite: ``session_log``, ``memory``, ...), ``kitdata`` (manifest, digests, requirement index);
- ``interface`` (what an implementation offers), ``runner`` (running cases, ``--impl``),
  ``harness_client`` / ``harness_server`` / ``harness_reference`` (the JSON-lines harness
  protocol), ``memory_driver`` (memory programs against a Python provider), ``model_impl`` (the
  memory model as an implementation), ``outcomes`` (the values every part shares:
  ``KitError``, outcomes, results), ``spec_constants`` (closed code sets and character
  classes the kit needs without the reference);
- ``implementations/``: the only part of the kit that imports :mod:`dshkit.reference` or
  :mod:`dshkit.adapters`: ``implementations.reference`` binds the reference to every suite
  (``--impl reference``, the default, loaded by name so the kit runs without it) and states
  what the projection and compaction properties check with it;
- ``baseline`` (expected failures), ``coverage`` (traceability), ``tooltests`` (the tests
  that check tool-scoped requirements), ``report`` (JSON, JUnit, Markdown, console),
  ``console`` (the command line), ``lint`` (self-lint and maintenance);
- ``strategies*``, ``properties`` (with ``properties_projection`` and
  ``properties_compaction``), ``propcheck`` (running one property) and ``memory_model``
  (property tests, also for third parties);
- ``divergences`` and ``compliance`` (the published divergence list and compliance page of an
  implementation), ``differential`` (two implementations compared on generated logs);
- ``pytest_plugin`` (``pytest --dshkit-impl ...``).

The specification of the kit is ``spec/conformance/kit.md`` and ``harness.md``.
"""
