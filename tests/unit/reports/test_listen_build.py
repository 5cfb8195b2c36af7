"""``vocencebench listen``'s folder: the seeded stratified sample, the left/right order, one
sample rate, nothing anywhere in it that names a system, and nothing in ``page/`` (what the
raters get) that says which clip is whose."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
import soundfile as sf

from listening_run import HOSTILE_TEXT, LABELS, SYSTEM_IDS, make_clip_run
from vocencebench.cache import clip_key
from vocencebench.calibration import read_listening_key
from vocencebench.cli import main
from vocencebench.errors import ConfigError
from vocencebench.listen import build_listening_test, stratified_sample


@pytest.fixture(scope="module")
def clip_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object, dict]:
    return make_clip_run(tmp_path_factory.mktemp("listenrun"), n=30)


def test_stratified_allocation_by_hand() -> None:
    # 10 items: 6 in "x", 3 in "y", 1 in "z"; n = 5 → exact quotas 3, 1.5, 0.5: floors 3, 1, 0
    # and the one left goes to the largest remainder, a tie between y and z broken by order.
    strata = ["x"] * 6 + ["y"] * 3 + ["z"]
    plan = stratified_sample(strata, 5, seed=11)
    assert [q for q, *_ in plan] == [3, 2, 0]
    assert [sorted(members) for _, *members in plan] == [[0, 1, 2, 3, 4, 5], [6, 7, 8], [9]]
    assert plan == stratified_sample(strata, 5, seed=11)
    assert plan != stratified_sample(strata, 5, seed=12)
    assert [q for q, *_ in stratified_sample(strata, 50)] == [6, 3, 1]  # capped at the total
    with pytest.raises(ConfigError, match="--items"):
        stratified_sample(strata, 0)


@pytest.mark.slow
def test_the_folder_is_deterministic_and_one_rate(clip_run: tuple, tmp_path: Path) -> None:
    run, h, _ = clip_run
    one = build_listening_test(run, tmp_path / "one", items=12, seed=5)
    two = build_listening_test(run, tmp_path / "two", items=12, seed=5)
    other = build_listening_test(run, tmp_path / "three", items=12, seed=6)
    files = sorted(p.relative_to(tmp_path / "one") for p in (tmp_path / "one").rglob("*")
                   if p.is_file())
    for rel in files:
        assert (tmp_path / "one" / rel).read_bytes() == (tmp_path / "two" / rel).read_bytes()
    assert one.trials == two.trials and one.trials != other.trials
    assert len(one.trials) == 12 and len({t.item for t in one.trials}) == 12
    assert 0 < sum(t.swap for t in one.trials) < 12  # both orders occur
    assert any(rel.parts[0] == "page" for rel in files) and Path("key.json") in files
    rates = {sf.info(str(p)).samplerate
             for p in (tmp_path / "one" / "page" / "clips").iterdir()}
    assert rates == {24000}  # a at 22.05 kHz was brought to b's 24 kHz
    data = json.loads((tmp_path / "one" / "page" / "test.json").read_text(encoding="utf-8"))
    key = read_listening_key(tmp_path / "one")
    assert key.test == one.test_id == data["test"]
    for t, rec in zip(one.trials, data["trials"], strict=True):
        p = h.pairs[t.index]
        assert rec["id"] == p.item.id == t.item
        assert key.left[t.n] == (t.item, "b" if t.swap else "a")
        # The left clip is the run's b exactly when the key says so: compare the durations.
        left = sf.info(str(tmp_path / "one" / "page" / rec["left"]))
        want = p.analysis_b.duration if t.swap else p.analysis_a.duration
        assert left.frames / left.samplerate == pytest.approx(want, abs=1e-3)


@pytest.mark.slow
def test_no_system_name_id_or_cache_key_anywhere(clip_run: tuple, tmp_path: Path) -> None:
    run, h, _ = clip_run
    out = tmp_path / "blind"
    build_listening_test(run, out, items=30, questions=("naturalness", "tone", "instruction"))
    secrets = {*LABELS, *SYSTEM_IDS.values()}
    for p in h.pairs:
        for sid in SYSTEM_IDS.values():
            secrets.add(clip_key(sid, p.item))
        for an in (p.analysis_a, p.analysis_b):
            if an.sha256:
                secrets.add(an.sha256)
                secrets.add(an.sha256[:20])  # the report's clip file names
    found = []
    for f in out.rglob("*"):
        name = str(f.relative_to(out))
        data = f.read_bytes() if f.is_file() else b""
        for s in secrets:
            if s in name or s.encode() in data or s.lower().encode() in data.lower():
                found.append((name, s))
    assert found == []
    assert sorted(p.name for p in out.iterdir()) == [".vocencebench", "key.json", "page"]
    assert sorted(p.name for p in (out / "page").iterdir()) == ["clips", "index.html",
                                                                "test.json"]


def _page_data(folder: Path) -> dict:
    page = (folder / "index.html").read_text(encoding="utf-8")
    start = page.index('id="vb-test">') + len('id="vb-test">')
    return json.loads(page[start:page.index("</script>", start)])


@pytest.mark.slow
def test_what_a_rater_gets_maps_no_clip_to_a_system(clip_run: tuple, tmp_path: Path) -> None:
    """The page's data and test.json (which ``--serve`` hands out) carry, per trial, the item
    and its two files only; which clip is the run's a is in key.json, which neither names."""
    run, _, _ = clip_run
    out = tmp_path / "blind"
    test = build_listening_test(run, out, items=30)
    assert test.page == out / "page"
    assert 0 < sum(t.swap for t in test.trials) < len(test.trials)
    for data in (_page_data(test.page),
                 json.loads((test.page / "test.json").read_text(encoding="utf-8"))):
        assert set(data) == {"test", "questions", "trials", "sample_rate"}
        for rec in data["trials"]:
            assert set(rec) == {"n", "id", "instruction", "text", "left", "right"}
    for name in ("index.html", "test.json"):
        text = (test.page / name).read_text(encoding="utf-8")
        assert "swap" not in text and "key.json" not in text
    key = read_listening_key(out / "key.json")
    assert {n: side for n, (_, side) in key.left.items()} == {
        t.n: "b" if t.swap else "a" for t in test.trials}


@pytest.mark.slow
def test_the_folder_a_rater_receives_holds_no_key(clip_run: tuple, tmp_path: Path) -> None:
    """``DIR/page`` is what a rater gets. Walk it: no key file, no 'swap', nothing of the key,
    no system label or id in any file. Zip it, as a researcher would: the key stays out,
    and the unzipped page still has every clip it plays."""
    run, _, _ = clip_run
    out = tmp_path / "blind"
    test = build_listening_test(run, out, items=30)
    key_text = (out / "key.json").read_text(encoding="utf-8")
    key = read_listening_key(out)
    names = {*LABELS, *SYSTEM_IDS.values()}
    sent = sorted(p for p in test.page.rglob("*") if p.is_file())
    assert len(sent) == 2 + 2 * len(test.trials)  # index.html, test.json and the clips
    for f in sent:
        rel = f.relative_to(test.page).as_posix()
        assert f.name != "key.json" and "key" not in rel and "swap" not in rel, rel
        data = f.read_bytes()
        assert b"vocencebench-listening-key" not in data and key_text.encode() not in data, rel
        for s in names:
            assert s.encode() not in data and s.lower().encode() not in data.lower(), (rel, s)
        if f.suffix in (".html", ".json"):
            text = data.decode("utf-8")
            assert "swap" not in text and "key.json" not in text and "../" not in text, rel
            assert '"left": "a"' not in text and '"left": "b"' not in text, rel
    # What the page knows of a trial's sides is a file name that is the same whichever
    # system is on the left: trial n's clips are always clips/NNN-1 and NNN-2.
    assert [(r["left"], r["right"]) for r in _page_data(test.page)["trials"]] == [
        (f"clips/{n:03d}-1.flac", f"clips/{n:03d}-2.flac") for n in sorted(key.left)]
    archive = Path(shutil.make_archive(str(tmp_path / "send"), "zip", root_dir=test.page))
    with zipfile.ZipFile(archive) as z:
        members = [m for m in z.namelist() if not m.endswith("/")]
        assert sorted(members) == sorted(f.relative_to(test.page).as_posix() for f in sent)
        assert not any("key" in m for m in members)
        assert not any(b"vocencebench-listening-key" in z.read(m) for m in members)
        z.extractall(tmp_path / "rater")
    got = tmp_path / "rater"
    assert not list(got.rglob("key.json")) and not (got / "labels").exists()
    for rec in _page_data(got)["trials"]:
        assert (got / rec["left"]).is_file() and (got / rec["right"]).is_file()
    assert (out / "key.json").is_file()  # the key stays with the researcher


@pytest.mark.slow
def test_two_different_tests_never_share_an_id(tmp_path: Path) -> None:
    """The id keys the page's stored answers: the same items, seed and sides with other clips
    (another run) must get another id, and the same inputs the same id."""
    run1, _, _ = make_clip_run(tmp_path / "r1", n=12)
    run2, _, _ = make_clip_run(tmp_path / "r2", n=12, seed=99)  # same items, other clips
    one = build_listening_test(run1, tmp_path / "one", items=8)
    again = build_listening_test(run1, tmp_path / "again", items=8)
    two = build_listening_test(run2, tmp_path / "two", items=8)
    assert [(t.item, t.swap) for t in one.trials] == [(t.item, t.swap) for t in two.trials]
    assert one.test_id == again.test_id
    assert one.test_id != two.test_id
    assert _page_data(two.page)["test"] == two.test_id != _page_data(one.page)["test"]


@pytest.mark.parametrize("seed", [-1, True, 1.5, "7"])
def test_a_bad_seed_is_one_config_error(clip_run: tuple, tmp_path: Path, seed: object) -> None:
    run, _, _ = clip_run
    with pytest.raises(ConfigError, match="--seed must be an integer ≥ 0"):
        build_listening_test(run, tmp_path / "t", seed=seed)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="--seed"):
        stratified_sample(["x", "y"], 1, seed=seed)  # type: ignore[arg-type]
    assert not (tmp_path / "t").exists()


def test_a_negative_seed_on_the_command_line_is_one_line(
        clip_run: tuple, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run, _, _ = clip_run
    with pytest.raises(SystemExit) as exc:
        main(["listen", str(run), "--out", str(tmp_path / "t"), "--seed", "-1"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("vocencebench listen: error:") and "--seed" in err, err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.slow
def test_the_page_embeds_text_inertly(clip_run: tuple, tmp_path: Path) -> None:
    run, _, _ = clip_run
    test = build_listening_test(run, tmp_path / "inert", items=30)
    page = (test.page / "index.html").read_text(encoding="utf-8")
    assert page.count("<script") == 2  # the data and the app, nothing from an item
    assert "onerror" in page  # only as escaped data in the JSON element:
    data = page[page.index('id="vb-test">'):page.index("</script>")]
    assert "<" not in data.removeprefix('id="vb-test">') and "\\u003cscript" in data
    assert "\x07" not in page and "\x00" not in page
    assert HOSTILE_TEXT not in page and "innerHTML" not in page


@pytest.mark.slow
def test_listen_command(clip_run: tuple, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    run, _, _ = clip_run
    assert main(["listen", str(run), "--out", str(tmp_path / "t"), "--items", "5",
                 "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "5 items of" in out
    page, key = tmp_path / "t" / "page", tmp_path / "t" / "key.json"
    assert f"open {page / 'index.html'}" in out and f"send raters {page} only" in out
    assert f"keep {key}" in out and key.is_file() and (page / "index.html").is_file()
    bad = tmp_path / "stranger"
    bad.mkdir()
    (bad / "x.txt").write_text("mine")
    assert main(["listen", str(run), "--out", str(bad)]) == 2
    assert "not empty" in capsys.readouterr().err
    assert main(["listen", str(run), "--out", str(tmp_path / "q"),
                 "--questions", "tone,loudness"]) == 2
    assert "questions must be" in capsys.readouterr().err
    assert main(["listen", str(run), "--out", str(tmp_path / "c"), "--cache",
                 str(tmp_path / "nope.sqlite")]) == 2
    assert "no cache at" in capsys.readouterr().err
