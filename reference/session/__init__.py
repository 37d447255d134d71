"""Reference behaviour for the DSH session event log (``dshkit.reference.session``)."""
