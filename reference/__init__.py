"""The reference implementation of the dshkit contract (importable as ``dshkit.reference``)."""
