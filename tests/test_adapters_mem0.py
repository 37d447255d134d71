"""mem0 adapter details that the vectors do not show (spec chapter ``adapters/mem0``)."""

from __future__ import annotations

import hashlib
import re
import time

import pytest

from dshkit.adapters import AdapterError, adapt, export
from dshkit.adapters.mem0 import iso

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$")


def test_export_writes_what_mem0_writes() -> None:
    output = export("mem0", [{"track": "user", "scope": "workspace", "text": "Línea 😀"}],
                    {"now": 1700000123456}).output
    assert isinstance(output, dict)
    item = output["results"][0]
    assert list(item) == ["id", "memory", "hash", "metadata", "created_at", "updated_at"]
    assert item["hash"] == hashlib.md5("Línea 😀".encode()).hexdigest()
    assert ISO.match(item["created_at"]) and item["updated_at"] is None
    assert re.match(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$",
                    item["id"])


def test_iso_times() -> None:
    assert iso(0) == "1970-01-01T00:00:00.000000+00:00"
    assert iso(1700000123456) == "2023-11-14T22:15:23.456000+00:00"


def test_expiry_defaults_to_the_clock() -> None:
    past, future = "2001-01-01", time.strftime("%Y-%m-%d", time.gmtime(time.time() + 86400 * 400))
    read = adapt("mem0", [{"memory": "old", "expiration_date": past},
                          {"memory": "new", "expiration_date": future}])
    assert [e["text"] for e in read.entries] == ["new"]
    assert [x.kind for x in read.losses] == ["item-skipped", "field-dropped"]


def test_unparseable_expiry_is_kept_and_reported() -> None:
    read = adapt("mem0", [{"memory": "m", "expiration_date": "next tuesday"}], {"now": 0})
    assert len(read.entries) == 1 and read.losses[0].field == "expiration_date"


def test_out_of_range_times_are_refused() -> None:
    with pytest.raises(AdapterError) as caught:
        export("mem0", [{"track": "user", "scope": "workspace", "text": "a",
                         "createdAt": 10**18}])
    assert caught.value.code == "ADAPTER_UNREPRESENTABLE"
    assert caught.value.details["pointer"] == "/0/createdAt"


def test_large_listing_keeps_order() -> None:
    items = [{"memory": f"m{i}", "metadata": {"tags": [f"t{i % 3}"]}} for i in range(300)]
    read = adapt("mem0", {"results": items})
    assert [e["text"] for e in read.entries] == [f"m{i}" for i in range(300)]
    assert export("mem0", read.entries, {"now": 0}).losses == []
