"""Adapters between other tools' memory formats and protocol entries (``dshkit.adapters``)."""
