"""The report's listening section: which clips (pure selection), the FLAC files read from the
run cache, re-rendering with and without the cache, and inert untrusted text."""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
import soundfile as sf

from listening_run import HOSTILE_TEXT, LABELS, SYSTEM_IDS, make_clip_run
from synthetic_run import make_head2head
from vocencebench.cli import main
from vocencebench.clips import (
    GROUPS,
    encode_flac,
    find_cache,
    select_clips,
)
from vocencebench.constants import REPORT_DECISIVE_CLIPS
from vocencebench.errors import ConfigError
from vocencebench.result import load_run, save_run, verify_run


@pytest.fixture(scope="module")
def clip_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object, dict]:
    return make_clip_run(tmp_path_factory.mktemp("cliprun"))


def test_selection_by_hand() -> None:
    h = make_head2head(n=40)
    sel = select_clips(h.pairs, h.labels, h.registry, k=3, worst=2, cap=5)
    deltas = sorted(((p.b.S - p.a.S, i) for i, p in enumerate(h.pairs)
                     if p.a.S is not None and p.b.S is not None), reverse=True)
    top_b = [i for d, i in deltas if d > 0][:3]
    top_a = [i for d, i in sorted(deltas) if d < 0][:3]
    decisive = [p.index for p in sel.picks if p.group == "decisive"]
    assert decisive == top_b + top_a  # b's lead first, each in order of |δ|
    assert [p.group for p in sel.picks] == sorted((p.group for p in sel.picks),
                                                 key=GROUPS.index)
    # The synthesis failure (item 7) produced no audio: not a "failure that produced audio".
    assert all(p.group != "failure" for p in sel.picks)
    worst = [p for p in sel.picks if any(r.startswith("worst ") for r in p.reasons)]
    assert worst  # every dimension with an imperfect item contributes up to 2
    assert len({p.index for p in sel.picks}) == len(sel.picks)  # one card per item
    again = select_clips(h.pairs, h.labels, h.registry, k=3, worst=2, cap=5)
    assert again == sel  # pure and deterministic
    assert select_clips(h.pairs, h.labels, h.registry, k=0, worst=0).picks == ()
    with pytest.raises(ConfigError, match="k must be"):
        select_clips(h.pairs, h.labels, h.registry, k=-1)


@pytest.mark.slow
def test_the_cap_counts_what_it_leaves_out(clip_run: tuple) -> None:
    _, h, _ = clip_run
    vetoed = [dataclass_replace_gate(p) for p in h.pairs]
    sel = select_clips(vetoed, h.labels, h.registry, k=0, worst=0, cap=4)
    assert sum(p.group == "gate" for p in sel.picks) == 4
    assert sel.omitted == {"gate": len(vetoed) - 4}


def dataclass_replace_gate(p: object) -> object:
    import dataclasses

    an = dataclasses.replace(p.analysis_b, gate=0, wer=0.9)  # type: ignore[attr-defined]
    return dataclasses.replace(p, analysis_b=an)  # type: ignore[type-var]


def test_flac_is_deterministic_and_lossless() -> None:
    import numpy as np

    x = (np.round(np.sin(np.arange(8000) / 9.0) * 20000) / 32768).astype(np.float32)
    one, two = encode_flac(x, 16000), encode_flac(x, 16000)
    assert one == two and one[:4] == b"fLaC"
    back, rate = sf.read(io.BytesIO(one), dtype="float32")
    assert rate == 16000 and np.array_equal(back, x)


@pytest.mark.slow
def test_report_plays_the_picked_clips(clip_run: tuple) -> None:
    run, h, durations = clip_run
    page = (run / "report.html").read_text(encoding="utf-8")
    srcs = re.findall(r'<audio controls preload="metadata" src="(clips/[0-9a-f]{20}\.flac)"',
                      page)
    sel = select_clips(h.pairs, h.labels, h.registry)
    assert len(srcs) == 2 * len(sel.picks) - sum(
        h.pairs[p.index].analysis_a.sha256 is None for p in sel.picks)
    for src in set(srcs):
        info = sf.info(str(run / src))
        assert info.format == "FLAC" and info.channels == 1
    assert verify_run(run) == []  # the clips are part of the recorded set
    md = (run / "report.md").read_text(encoding="utf-8")
    assert "## Listen" in md and "FLAC files in clips/" in md
    # The picked items' true durations are what the files hold.
    for pick in sel.picks:
        p = h.pairs[pick.index]
        for side in ("a", "b"):
            an = getattr(p, f"analysis_{side}")
            if an.sha256 is None:
                continue
            info = sf.info(str(run / f"clips/{an.sha256[:20]}.flac"))
            assert info.frames / info.samplerate == pytest.approx(durations[(p.item.id, side)],
                                                                  abs=1e-9)


@pytest.mark.slow
def test_untrusted_text_is_escaped_in_the_section(clip_run: tuple) -> None:
    run, _, _ = clip_run
    page = (run / "report.html").read_text(encoding="utf-8")
    assert "<script>" not in page and "onerror=" not in page.replace("onerror=&quot;", "")
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert "\x07" not in page and "\x00" not in page
    assert "<bdi>&lt;script&gt;" in page  # isolated: the RLO inside cannot leak out
    assert "the quarterly &lt;b&gt;figures&lt;/b&gt;" in page  # the transcript, escaped
    assert HOSTILE_TEXT not in page


@pytest.mark.slow
def test_rerender_without_the_cache_reuses_or_says_so(clip_run: tuple, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    run, _, _ = clip_run
    copy = tmp_path / "copied"
    shutil.copytree(run, copy)  # a copied folder, without the cache beside it
    h = load_run(copy)
    h.metadata["cache"]["path"] = str(tmp_path / "gone.sqlite")
    before = sorted(p.name for p in (copy / "clips").iterdir())
    save_run(h, copy)  # the exported clips are reused: same files, same page
    assert sorted(p.name for p in (copy / "clips").iterdir()) == before
    assert (copy / "report.html").read_bytes() == (run / "report.html").read_bytes().replace(
        str(run.parent / "cache.sqlite").encode(), str(tmp_path / "gone.sqlite").encode())
    shutil.rmtree(copy / "clips")
    assert main(["report", str(copy)]) == 0
    capsys.readouterr()
    page = (copy / "report.html").read_text(encoding="utf-8")
    section = page[page.index('id="listening"'):page.index("<h2>Run metadata")]
    assert section.count("<p") == 1 and "is gone, so its clips cannot be played" in section
    assert "<audio" not in page and not (copy / "clips").exists()
    # --cache puts the clips back.
    assert main(["report", str(copy), "--cache", str(run.parent / "cache.sqlite")]) == 0
    assert (copy / "report.html").read_text(encoding="utf-8").count("<audio") > 10


def test_find_cache_tries_the_run_folder(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "cache.sqlite").write_bytes(b"")
    path, note = find_cache({"cache": {"path": "elsewhere/cache.sqlite"}}, tmp_path / "run")
    assert path == tmp_path / "run" / "cache.sqlite" and note is None
    assert find_cache({"cache": {"path": "/dev/null"}}, tmp_path)[1] == (
        "clips: this run kept no cache (--no-cache), so there are no clips to play")
    assert "records no cache" in str(find_cache({}, tmp_path)[1])


@pytest.mark.slow
def test_report_options(clip_run: tuple, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str]) -> None:
    run, _, _ = clip_run
    copy = tmp_path / "opts"
    shutil.copytree(run, copy)
    assert main(["report", str(copy), "--clips", "1"]) == 0
    page = (copy / "report.html").read_text(encoding="utf-8")
    assert page.count("(#1 of 1)") == 2 and "(#2 of" not in page
    assert main(["report", str(copy), "--no-clips"]) == 0
    assert 'id="listening"' not in (copy / "report.html").read_text(encoding="utf-8")
    assert not (copy / "clips").exists() or not any((copy / "clips").iterdir())
    capsys.readouterr()
    assert REPORT_DECISIVE_CLIPS == 8
    assert set(SYSTEM_IDS) == set(LABELS)


def test_the_markdown_counts_only_items_with_both_clips() -> None:
    """report.md's sentence counts the items whose two clips are played, and says how many
    have a side without a clip (here: b of "y" produced no audio)."""
    from vocencebench._report.listening import listening_markdown
    from vocencebench.clips import ClipFile, ClipSelection, ExportedClips, Pick

    picks = tuple(Pick(i, item, "decisive", ("δ",)) for i, item in enumerate("xyz"))
    sel = ClipSelection(picks, k=8, worst=3, cap=40)
    files = {(item, side): ClipFile(f"clips/{item}{side}.flac", 1.0, 16000, 10)
             for item in "xyz" for side in "ab" if (item, side) != ("y", "b")}
    clips = ExportedClips(files, {("y", "b"): "no audio (the system produced none)"}, None)
    [line] = [ln for ln in listening_markdown(sel, clips) if ln.startswith("report.html")]
    assert line.startswith("report.html plays both systems' clips for 2 of 3 items ")
    assert "5 FLAC files in clips/" in line
    assert line.endswith(" 1 item(s) have a side without a clip; the page says why for each.")
    full = ExportedClips({k: v for k, v in files.items() if k[0] != "y"}, {}, None)
    [line] = [ln for ln in listening_markdown(ClipSelection(picks[::2], 8, 3, 40), full)
              if ln.startswith("report.html")]
    assert "for 2 of 2 items" in line and "without a clip" not in line
