from __future__ import annotations

import html
import json
import logging
import os
import random
import sqlite3
from pathlib import Path

import pytest

from vocencebench.cache import CACHE_SCHEMA, TABLES, Cache, NullCache, cache_key
from vocencebench.cli import main
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
    db.execute("UPDATE vocencebench_cache SET v='999' WHERE k='schema'")
    db.commit()
    db.close()
    with pytest.raises(CacheError, match="layout 999"):
        Cache(path)


def test_corrupt_file_refused(tmp_path) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(CacheError, match="is not a SQLite database"):
        Cache(path)


def test_null_cache_stores_nothing() -> None:
    c = NullCache()
    c.put_json("probes", "k", {"x": 1})
    assert c.get_json("probes", "k") is None
    assert c.count("probes") == 0


# --------------------------------------------------------------------------- a cache that lies
# Issue 12, finding 5: what is read back is verified; foreign and broken files are refused
# with one line naming the file.


def _raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path)


def _one_line_error(exc: pytest.ExceptionInfo[CacheError], path: Path) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and str(path) in msg
    return msg


def test_random_bytes_inside_a_clip_are_a_counted_miss(tmp_path: Path,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "c.sqlite"
    clip = bytes(range(256)) * 64
    with Cache(path) as c:
        for k in ("k1", "k2", "k3"):
            c.put_bytes("clips", k, clip, {"item": k})
    db = _raw(path)
    for k in ("k1", "k2"):  # same length, a few bytes replaced in the middle
        (data,) = db.execute("SELECT data FROM clips WHERE key=?", (k,)).fetchone()
        bad = data[:1000] + os.urandom(16) + data[1016:]
        db.execute("UPDATE clips SET data=? WHERE key=?", (bad, k))
    db.commit()
    db.close()
    with caplog.at_level(logging.WARNING, logger="vocencebench.cache"), Cache(path) as c:
        assert c.get_bytes("clips", "k1") is None and c.get_bytes("clips", "k2") is None
        assert c.get_bytes("clips", "k3") == (clip, {"item": "k3"})
        assert c.corrupt["clips"] == 2 and c.misses["clips"] == 2 and c.hits["clips"] == 1
        warnings = [r for r in caplog.records if "failed its digest check" in r.getMessage()]
        assert len(warnings) == 1  # once per table, not once per row
        c.put_bytes("clips", "k1", clip, {"item": "k1"})  # the recomputed value replaces it
        assert c.get_bytes("clips", "k1") == (clip, {"item": "k1"})


def test_a_row_stored_as_text_that_is_not_utf8_is_a_miss_not_a_dead_cache(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The same bytes with SQLite's TEXT type (a flipped type tag, an `x || y` edit): reading
    # the row raised "Could not decode to UTF-8", a fatal CacheError on every run, and
    # `cache check --delete-bad` failed the same way, so only deleting the file helped.
    path = tmp_path / "c.sqlite"
    clip = bytes(range(256)) * 64  # not valid UTF-8
    with Cache(path) as c:
        c.put_bytes("clips", "k1", clip, {"item": "k1"})
        c.put_bytes("clips", "k2", clip, {"item": "k2"})
    db = _raw(path)
    db.execute("UPDATE clips SET data = CAST(data AS TEXT) WHERE key='k1'")
    db.execute("UPDATE clips SET meta = CAST(X'7bff22697465' AS TEXT) WHERE key='k2'")
    db.commit()
    db.close()
    with Cache(path) as c:
        assert c.get_bytes("clips", "k1") is None and c.get_bytes("clips", "k2") is None
        assert c.corrupt["clips"] == 2
    assert main(["cache", "check", str(path)]) == 1
    assert "clips: 2 rows, 2 failed their digests" in capsys.readouterr().out
    assert main(["cache", "check", str(path), "--delete-bad"]) == 1
    assert "2 deleted" in capsys.readouterr().out
    assert main(["cache", "check", str(path)]) == 0


def test_a_flipped_value_in_valid_json_is_a_miss(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with Cache(path) as c:
        c.put_json("probes", "p", {"probes": {"pace": {"d": 1.0, "label": "slow"}}})
    db = _raw(path)
    (data,) = db.execute("SELECT data FROM probes WHERE key='p'").fetchone()
    assert b'"d":1.0' in data
    db.execute("UPDATE probes SET data=? WHERE key='p'", (data.replace(b'"d":1.0', b'"d":0.0'),))
    db.commit()
    db.close()
    with Cache(path) as c:
        assert c.get_json("probes", "p") is None and c.corrupt["probes"] == 1


def test_rows_moved_to_another_key_or_with_edited_meta_are_misses(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with Cache(path) as c:
        c.put_bytes("clips", "a", b"AAAA", {"item": "a"})
        c.put_bytes("clips", "b", b"BBBB", {"item": "b"})
        c.put_json("verdicts", "v", {"winner": "a"})
    db = _raw(path)
    db.execute("UPDATE clips SET key='tmp' WHERE key='a'")
    db.execute("UPDATE clips SET key='a' WHERE key='b'")
    db.execute("UPDATE clips SET key='b' WHERE key='tmp'")  # swapped, digests and all
    db.execute("UPDATE verdicts SET meta='{\"x\":1}' WHERE key='v'")
    db.commit()
    db.close()
    with Cache(path) as c:
        assert c.get_bytes("clips", "a") is None and c.get_bytes("clips", "b") is None
        assert c.get_json("verdicts", "v") is None
        assert c.corrupt == {"clips": 2, "probes": 0, "transcripts": 0, "verdicts": 1}


def test_delete(tmp_path: Path) -> None:
    with Cache(tmp_path / "c.sqlite") as c:
        c.put_json("transcripts", "t", {"text": "hi"})
        assert c.delete("transcripts", "t") is True
        assert c.delete("transcripts", "t") is False
        assert c.get_json("transcripts", "t") is None


def test_a_users_sqlite_file_is_refused_and_never_written(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    db = _raw(path)
    db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    db.execute("INSERT INTO invoices VALUES (1, 9.5)")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(CacheError) as err:
        Cache(path)
    msg = _one_line_error(err, path)
    assert "not a vocencebench cache (tables: invoices)" in msg and "--cache PATH" in msg
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache.sqlite"]  # no -wal/-shm
    tables = {r[0] for r in _raw(path).execute("SELECT name FROM sqlite_master")}
    assert tables == {"invoices"}


def test_a_cache_of_the_old_layout_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    db = _raw(path)  # what CACHE_SCHEMA 1 wrote
    db.execute("CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT)")
    db.execute("INSERT INTO meta VALUES ('schema', '1')")
    for t in TABLES:
        db.execute(f"CREATE TABLE {t} (key TEXT PRIMARY KEY, meta TEXT, data BLOB)")
    db.commit()
    db.close()
    with pytest.raises(CacheError, match=r"older vocencebench \(layout 1\); this one uses "
                                         f"layout {CACHE_SCHEMA}: delete the file"):
        Cache(path)


def test_malformed_database_is_a_one_line_cache_error(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with Cache(path) as c:
        for k in range(40):
            c.put_bytes("clips", f"k{k}", bytes([k]) * 4000)
    raw = bytearray(path.read_bytes())
    rng = random.Random(7)
    raw[4096:-4096] = bytes(rng.randrange(256) for _ in range(len(raw) - 8192))
    path.write_bytes(bytes(raw))
    with pytest.raises(CacheError) as err:
        c = Cache(path)
        for k in range(40):
            c.get_bytes("clips", f"k{k}")
    msg = _one_line_error(err, path)
    assert "is damaged" in msg and "delete it" in msg
    path.write_bytes(b"garbage " * 512)
    with pytest.raises(CacheError) as err:
        Cache(path)
    assert "not a SQLite database" in _one_line_error(err, path)


def test_read_only_cache_that_needs_a_write_is_a_one_line_cache_error(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with Cache(path) as c:
        c.put_json("probes", "p", {"x": 1})
    # SQLite's own read-only refusal (works as root too, where chmod is not enough).
    c = Cache(path)
    c._conn().execute("PRAGMA query_only=1")
    assert c.get_json("probes", "p") == {"x": 1}  # reading still works
    with pytest.raises(CacheError) as err:
        c.put_json("probes", "q", {"x": 2})
    assert "is read-only" in _one_line_error(err, path)
    c.close()
    with Cache(path, readonly=True) as ro:  # opened read-only on purpose (cache check)
        assert ro.get_json("probes", "p") == {"x": 1}
        with pytest.raises(CacheError, match="read-only"):
            ro.put_json("probes", "q", {"x": 2})
    if os.geteuid() != 0:  # a file the user may not write
        path.chmod(0o444)
        tmp_path.chmod(0o555)
        try:
            c = Cache(path)
            with pytest.raises(CacheError) as err:
                c.put_json("probes", "q", {"x": 2})
            _one_line_error(err, path)
            c.close()
        finally:
            tmp_path.chmod(0o755)
            path.chmod(0o644)


def test_full_disk_is_a_one_line_cache_error_and_the_cache_stays_usable(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with Cache(path) as c:
        c.put_json("probes", "p", {"x": 1})
        pages = c._conn().execute("PRAGMA page_count").fetchone()[0]
        c._conn().execute(f"PRAGMA max_page_count={pages + 1}")  # a disk with one page left
        with pytest.raises(CacheError) as err:
            c.put_bytes("clips", "big", b"\x00" * 200_000)
        assert "the disk is full" in _one_line_error(err, path)
        assert c.get_json("probes", "p") == {"x": 1} and c.count("clips") == 0


def test_locked_cache_is_a_one_line_cache_error(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    Cache(path).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        c = Cache(path, timeout=0.05)
        with pytest.raises(CacheError) as err:
            c.put_json("probes", "p", {"x": 1})
        assert "is locked by another process" in _one_line_error(err, path)
        c.close()
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_cache_check_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.sqlite"
    with Cache(path) as c:
        c.put_bytes("clips", "k1", b"RIFF" * 100)
        c.put_json("probes", "p1", {"d": 1.0})
    assert main(["cache", "check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "integrity_check: ok" in out and "OK: 2 rows, every digest matches" in out
    db = _raw(path)
    db.execute("UPDATE probes SET data=CAST('{\"d\":0.0}' AS BLOB)")
    db.commit()
    db.close()
    assert main(["cache", "check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "probes: 1 rows, 1 failed their digests (e.g. p1)" in out
    assert "FAILED: 1 row(s) failed their digests" in out
    assert main(["cache", "check", str(path), "--delete-bad"]) == 1
    assert "1 deleted" in capsys.readouterr().out
    assert main(["cache", "check", str(path)]) == 0
    capsys.readouterr()

    foreign = tmp_path / "user.sqlite"
    db = _raw(foreign)
    db.execute("CREATE TABLE notes (t TEXT)")
    db.commit()
    db.close()
    assert main(["cache", "check", str(foreign)]) == 1
    assert "FAILED:" in capsys.readouterr().out and not Path(f"{foreign}-wal").exists()
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"\x01" * 5000)
    assert main(["cache", "check", str(garbage)]) == 1
    assert "not a SQLite database" in capsys.readouterr().out
    assert main(["cache", "check", str(tmp_path / "missing.sqlite")]) == 2
    assert not (tmp_path / "missing.sqlite").exists()


@pytest.mark.slow
def test_tampered_clip_and_flipped_d_are_recomputed_by_a_real_run(tmp_path: Path) -> None:
    import vocencebench as vb

    items = vb.load_benchmark()[:3]
    flat, follow = vb.EspeakSystem("espeak-flat"), vb.EspeakSystem("espeak-follow")
    path = tmp_path / "cache.sqlite"

    def run() -> tuple[Cache, vb.Head2Head]:
        with Cache(path) as c:
            h2h = vb.benchmark(items, flat, follow, cache=c, workers=1, progress=False,
                               labels=("flat", "follow"))
        return c, h2h

    _, first = run()
    db = _raw(path)
    # 1. random bytes written inside one cached clip (same length, valid-looking row)
    key, data = db.execute("SELECT key, data FROM clips ORDER BY key LIMIT 1").fetchone()
    db.execute("UPDATE clips SET data=? WHERE key=?",
               (data[:200] + os.urandom(64) + data[264:], key))
    # 2. a cached pace d flipped 1.0 -> 0.0 in place, still valid JSON
    flipped = 0
    for pkey, pdata in db.execute("SELECT key, data FROM probes").fetchall():
        part = json.loads(pdata)
        pace = part.get("probes", {}).get("pace")  # canary rows have another shape
        if pace and pace["d"] == 1.0 and not flipped:
            text = pdata.decode()
            i = text.index('"d":1.0', text.index('"pace":'))
            db.execute("UPDATE probes SET data=? WHERE key=?",
                       ((text[:i] + '"d":0.0' + text[i + 7:]).encode(), pkey))
            assert json.loads(text[:i] + '"d":0.0' + text[i + 7:])["probes"]["pace"]["d"] == 0
            flipped += 1
    assert flipped == 1
    db.commit()
    db.close()

    cache, second = run()
    assert cache.corrupt["clips"] == 1 and cache.misses["clips"] == 1  # re-synthesised
    assert cache.corrupt["probes"] == 1  # the flipped record was recomputed, not used
    assert [(p.a.S, p.b.S) for p in second.pairs] == [(p.a.S, p.b.S) for p in first.pairs]
    assert [p.a.d for p in second.pairs] == [p.a.d for p in first.pairs]
    assert [p.b.d for p in second.pairs] == [p.b.d for p in first.pairs]
    # ... and reported: counts per table in run.json, one WARNING line in every report
    saved = second.save(tmp_path / "run")
    meta = json.loads((saved / "run.json").read_text())["metadata"]
    assert meta["cache"]["corrupt"] == {"clips": 1, "probes": 1, "transcripts": 0,
                                        "verdicts": 0}
    warning = (f"WARNING: cache: 2 stored entries failed the digest check (clips 1, probes 1) "
               f"and were recomputed, never used; `vocencebench cache check {path}`")
    flagged = [x for x in second.summary().splitlines() if "WARNING: cache" in x]
    assert len(flagged) == 1 and warning in flagged[0], flagged
    assert warning in (saved / "report.md").read_text()
    assert html.escape(warning) in (saved / "report.html").read_text()
    assert "WARNING: cache" not in first.summary()  # nothing to report on a clean cache
    # the recomputed rows replaced the bad ones: a third run finds nothing corrupt
    third, again = run()
    assert sum(third.corrupt.values()) == 0 and sum(third.misses.values()) == 0
    assert "WARNING: cache" not in again.summary()
