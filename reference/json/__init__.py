"""JSON, the one way dshkit reads and writes it.

* :mod:`.codec`: the lossless reading rules of session logs (spec chapter ``session/json``:
  ``loads``, ``check_lossless``) and serialisation byte for byte as ECMAScript
  ``JSON.stringify`` writes (``dumps``, ``js_number``);
* :mod:`.parse`: the reader's parser seam, orjson where it gives the same answers and the
  exact parser otherwise, with the backend switch ``using()``;
* :mod:`.inputs`: JSON texts from outside a log (files, options, adapter payloads), bounded
  like the reader, failing with one :class:`~.inputs.JsonInputError`.

Names are loaded on first use (the parser seam imports orjson).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import exports

if TYPE_CHECKING:
    from .codec import MAX_SAFE_INTEGER, check_lossless, dumps, js_number, loads
    from .inputs import JsonInputError, parse_json, read_json
    from .parse import backend, using

_HOMES: dict[str, str] = {
    "MAX_SAFE_INTEGER": "codec", "check_lossless": "codec", "dumps": "codec",
    "js_number": "codec", "loads": "codec",
    "JsonInputError": "inputs", "parse_json": "inputs", "read_json": "inputs",
    "backend": "parse", "using": "parse",
}


__getattr__, __dir__ = exports(__name__, _HOMES, globals())


__all__ = [
    "MAX_SAFE_INTEGER",
    "JsonInputError",
    "backend",
    "check_lossless",
    "dumps",
    "js_number",
    "loads",
    "parse_json",
    "read_json",
    "using",
]
