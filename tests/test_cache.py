from __future__ import annotations

import sqlite3

import pytest

from vocencebench.cache import Cache, NullCache, cache_key
from vocencebench.errors import CacheError


def test_cache_key_is_canonical() -> None:
    assert cache_key({"a": 1, "b": [1, 2]}) == cache_key({"b": [1, 2], "a": 1})
    assert cache_key({"a": 1}) != cache_key({"a": 2})


def test_round_trip_persists_across_connections(tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    with Cache(path) as c:
        c.put_bytes("clips", "k1", b"RIFF....", {"item": "vb-00001"})
        c.put_json("verdicts", "k2", {"score_a": 2.5, "winner": "a"})
    with Cache(path) as c:
        data, meta = c.get_bytes("clips", "k1")  # type: ignore[misc]
        assert data == b"RIFF...." and meta == {"item": "vb-00001"}
        assert c.get_json("verdicts", "k2") == {"score_a": 2.5, "winner": "a"}
        assert c.get_json("verdicts", "nope") is None
        assert c.count("clips") == 1
        assert c.hits["clips"] == 1 and c.misses["verdicts"] == 1


def test_wal_mode_and_unknown_table(tmp_path) -> None:
    c = Cache(tmp_path / "c.sqlite")
    mode = sqlite3.connect(tmp_path / "c.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    with pytest.raises(CacheError, match="unknown cache table 'bogus'"):
        c.get_json("bogus", "k")
    c.close()


def test_incompatible_layout_refused(tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    Cache(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET v='999' WHERE k='schema'")
    db.commit()
    db.close()
    with pytest.raises(CacheError, match="layout 999"):
        Cache(path)


def test_corrupt_file_refused(tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(CacheError, match="cannot open cache"):
        Cache(path)


def test_null_cache_stores_nothing() -> None:
    c = NullCache()
    c.put_json("probes", "k", {"x": 1})
    assert c.get_json("probes", "k") is None
    assert c.count("probes") == 0
