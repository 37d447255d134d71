"""The dshkit conformance kit (importable as ``dshkit.conformance``)."""
