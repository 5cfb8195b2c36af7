"""Assemble tests/data/real_speech/ (the real-speech validation set of the probes) from public
repositories that commit small samples of read speech.

Run (needs the repositories as bare git mirrors, e.g. from the search tool's ``fetch``):

    python benchmarks/real_speech/build_set.py --mirrors /work/.mirror \
        [--out tests/data/real_speech]

Each source file is read with ``git --git-dir=<mirror> show <commit>:<path>`` (so nothing but
the pinned commit is used), decoded, mixed to mono, resampled to 16 kHz (soxr HQ) and written
as 16-bit FLAC. Long LibriSpeech utterances are cut to one excerpt of 1.8–2.8 s that starts
and ends inside a pause (found with the Silero VAD, ``silero.py``), so the set stays a few MB.
Transcripts: the dataset's own where the repository ships it (CMU ARCTIC prompts, VCTK txt);
otherwise PocketSphinx's transcript of the excerpt (``transcript_source: "pocketsphinx"``),
which the pace measurement uses as the script (see docs/probes.md for what that implies).
Every clip's provenance and labels go to ``manifest.jsonl``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf
import soxr

sys.path.insert(0, str(Path(__file__).resolve().parent))
import silero

RATE = 16_000
LIBRI_PER_SEX = 42  # train-clean-100 speakers of each sex (one excerpt each)
EXCERPT_MIN_S, EXCERPT_MAX_S = 1.8, 2.8
PAUSE_S = 0.15  # a gap at least this long may hold a cut
MARGIN_S = 0.12  # kept on each side of the excerpt's speech

RESEMBLYZER = ("resemble-ai/Resemblyzer", "15d828edebe06bc72b9cabc8ef8ca5ab2cb457ce")
PYROOM = ("LCAV/pyroomacoustics", "6fe43fecb7c358ac9aaa054e7e73641189f1afff")
MSC = ("RichardSterry/msc-project", "638c3e775250ba3a7f050ae350b859648400f854")
RTVC = ("CorentinJ/Real-Time-Voice-Cloning", "865eba8826bb6d76721a9d828a546724779c23ab")

LIBRI_LICENCE = "CC-BY-4.0 (LibriSpeech, Vassil Panayotov 2014)"
VCTK_LICENCE = "CC-BY-4.0 (CSTR VCTK Corpus, University of Edinburgh)"
ARCTIC_LICENCE = "CMU ARCTIC licence (free use, modification and redistribution with notice)"

#: CMU ARCTIC prompts (cmuarctic.data) of the clips pyroomacoustics ships.
ARCTIC_PROMPTS = {
    "a0001": "Author of the danger trail, Philip Steels, etc.",
    "a0002": "Not at this particular case, Tom, apologized Whittemore.",
    "a0003": "For the twentieth time that evening the two men shook hands.",
    "a0004": "Lord, but I'm glad to see you again, Phil.",
    "a0005": "Will we ever forget it.",
    "a0006": "God bless 'em, I hope I'll go on seeing them forever.",
}
#: CMU ARCTIC speakers: aew is a US English man, axb an Indian English woman.
ARCTIC_SEX = {"aew": "male", "axb": "female"}
#: VCTK clips of msc-project: (speaker, sex from VCTK's speaker-info.txt, transcript as its
#: docs/vctk.md gives it; "Ahat" there corrected to "That"). Its per-speaker transcript files
#: are misaligned with the audio for some utterances, so they are not used.
VCTK_MSC = {
    "p238_165": ("p238", "female", "The arrangement will avoid any conflicts of interest."),
    "p255_367": ("p255", "male",
                 "Anything is possible in football and we can beat Celtic again."),
    "p301_102": ("p301", "female", "I am sure all schools would accept that."),
    "p314_272": ("p314", "female", "That was a bonus, but it was not the main objective."),
    "p317_166": ("p317", "female", "That is a lot of writing."),
    "p376_193": ("p376", "male",
                 "The modern approach will also be reflected in the terms of address."),
}
VCTK_RTVC = {"p240_00000": ("p240", "female"), "p260_00000": ("p260", "male")}
LIBRI_RTVC = ("1320_00000", "3575_00000", "6829_00000", "8230_00000")


@dataclass
class Clip:
    id: str
    file: str
    dataset: str
    speaker: str
    sex: str
    source_repo: str
    source_commit: str
    source_path: str
    source_format: str
    licence: str
    excerpt_start_s: float | None
    excerpt_end_s: float | None
    duration_s: float
    sample_rate: int
    transcript: str | None
    transcript_source: str


def git_dir(mirrors: Path, repo: str) -> Path:
    """The git directory of ``repo``'s mirror under ``mirrors`` (bare, or a work tree's .git)."""
    gd = mirrors / repo.replace("/", "+") / "repo"
    return gd / ".git" if (gd / ".git").is_dir() else gd


def git_show(mirrors: Path, repo: str, commit: str, path: str) -> bytes:
    data = subprocess.run(["git", f"--git-dir={git_dir(mirrors, repo)}", "show",
                           f"{commit}:{path}"], check=True, capture_output=True).stdout
    if data.startswith(b"version https://git-lfs"):
        raise SystemExit(f"{repo}:{path} is a Git LFS pointer, not audio")
    return data


def decode(data: bytes) -> tuple[np.ndarray, str]:
    with sf.SoundFile(io.BytesIO(data)) as f:
        x = f.read(dtype="float64", always_2d=True)
        rate, fmt = f.samplerate, f"{f.format}/{f.subtype}"
    y = x.mean(axis=1)
    if rate != RATE:
        y = soxr.resample(y, rate, RATE, quality="HQ")
    return np.asarray(y, dtype=np.float64), f"{fmt}@{rate}"


def excerpt(y: np.ndarray) -> tuple[float, float] | None:
    """(start s, end s) of 1.8–2.8 s of speech bounded by pauses of ≥ 0.15 s, or None."""
    segs = silero.segments(y.astype(np.float32), min_silence_s=0.05)
    merged: list[list[float]] = []
    for a, b in segs:
        if merged and a - merged[-1][1] < PAUSE_S:
            merged[-1][1] = b
        else:
            merged.append([a, b])
    dur = y.shape[0] / RATE
    for i in range(len(merged)):
        if i > 0 and merged[i][0] - merged[i - 1][1] < PAUSE_S:
            continue
        for j in range(i, len(merged)):
            span = merged[j][1] - merged[i][0]
            if span > EXCERPT_MAX_S:
                break
            if span >= EXCERPT_MIN_S:
                lo = max(0.0, merged[i][0] - MARGIN_S)
                hi = min(dur, merged[j][1] + MARGIN_S)
                if i > 0:
                    lo = max(lo, (merged[i - 1][1] + merged[i][0]) / 2)
                if j + 1 < len(merged):
                    hi = min(hi, (merged[j][1] + merged[j + 1][0]) / 2)
                return round(lo, 3), round(hi, 3)
    return None


def transcribe(y: np.ndarray) -> str:
    from vocencebench.audio import to_wav_bytes
    from vocencebench.transcribe import pocketsphinx_transcriber

    return pocketsphinx_transcriber()(to_wav_bytes(y.astype(np.float32), RATE)).text.lower()


def write(out: Path, cid: str, y: np.ndarray) -> str:
    name = f"{cid}.flac"
    peak = float(np.max(np.abs(y)))
    if peak > 1.0:
        y = y / peak
    sf.write(out / name, y, RATE, format="FLAC", subtype="PCM_16")
    return name


def write_manifest(out: Path, clips: list[Any]) -> int:
    """``out/manifest.jsonl`` (one sorted-key JSON line per clip record); returns the bytes of
    every FLAC in ``out``."""
    with open(out / "manifest.jsonl", "w", encoding="utf-8") as fh:
        for c in clips:
            fh.write(json.dumps(asdict(c), ensure_ascii=False, sort_keys=True) + "\n")
    return sum(f.stat().st_size for f in out.glob("*.flac"))


def libri_speakers(mirrors: Path) -> dict[str, str]:
    text = git_show(mirrors, *RESEMBLYZER, "audio_data/librispeech_train-clean-100/SPEAKERS.TXT")
    sexes: dict[str, str] = {}
    for line in text.decode("utf-8").splitlines():
        if line.startswith(";") or "|" not in line:
            continue
        parts = [p.strip() for p in line.split("|")]
        sexes[parts[0]] = {"F": "female", "M": "male"}[parts[1]]
    return sexes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path("tests/data/real_speech"))
    args = ap.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    for f in out.glob("*.flac"):
        f.unlink()
    sexes = libri_speakers(args.mirrors)
    clips: list[Clip] = []

    def add(cid: str, dataset: str, speaker: str, sex: str, src: tuple[str, str], path: str,
            licence: str, transcript: str | None, cut: bool) -> None:
        data = git_show(args.mirrors, src[0], src[1], path)
        y, fmt = decode(data)
        lo = hi = None
        if cut:
            span = excerpt(y)
            if span is None:
                print(f"skip {cid}: no 1.8–2.8 s excerpt between pauses", file=sys.stderr)
                return
            lo, hi = span
            y = y[round(lo * RATE):round(hi * RATE)]
        source = "dataset"
        if transcript is None:
            transcript, source = transcribe(y), "pocketsphinx"
        clips.append(Clip(cid, write(out, cid, y), dataset, speaker, sex, f"github:{src[0]}",
                          src[1], path, fmt, licence, lo, hi, round(y.shape[0] / RATE, 3),
                          RATE, transcript, source))
        print(f"{cid}: {sex} {y.shape[0] / RATE:.2f} s  {transcript!r}", file=sys.stderr)

    # LibriSpeech train-clean-100: one utterance per speaker in Resemblyzer; balanced by sex
    ls = subprocess.run(
        ["git", f"--git-dir={args.mirrors / 'resemble-ai+Resemblyzer' / 'repo'}", "ls-tree",
         "--name-only", RESEMBLYZER[1], "audio_data/librispeech_train-clean-100/"],
        check=True, capture_output=True, text=True).stdout.split()
    files = sorted((p for p in ls if p.endswith(".flac")),
                   key=lambda p: int(os.path.basename(p).split("-")[0]))
    taken = {"female": 0, "male": 0}
    for p in files:
        spk = os.path.basename(p).split("-")[0]
        sex = sexes[spk]
        if taken[sex] >= LIBRI_PER_SEX:
            continue
        before = len(clips)
        add(f"ls-{os.path.basename(p)[:-5]}", "LibriSpeech train-clean-100", spk, sex,
            RESEMBLYZER, p, LIBRI_LICENCE, None, cut=True)
        taken[sex] += len(clips) - before
    # LibriSpeech test-other: 10 speakers; the two shortest utterances of each, excerpted
    lt = subprocess.run(
        ["git", f"--git-dir={args.mirrors / 'resemble-ai+Resemblyzer' / 'repo'}", "ls-tree",
         "-r", "-l", RESEMBLYZER[1], "audio_data/librispeech_test-other/"],
        check=True, capture_output=True, text=True).stdout.splitlines()
    by_spk: dict[str, list[tuple[int, str]]] = {}
    for line in lt:
        meta, path = line.split("\t")
        if path.endswith(".flac"):
            by_spk.setdefault(path.split("/")[2], []).append((int(meta.split()[3]), path))
    for spk in sorted(by_spk, key=int):
        for _, p in sorted(by_spk[spk])[:2]:
            add(f"lo-{os.path.basename(p)[:-5]}", "LibriSpeech test-other", spk, sexes[spk],
                RESEMBLYZER, p, LIBRI_LICENCE, None, cut=True)
    # LibriSpeech references in Real-Time-Voice-Cloning (MP3)
    for name in LIBRI_RTVC:
        spk = name.split("_")[0]
        add(f"lr-{name}", "LibriSpeech (MP3, Real-Time-Voice-Cloning samples)", spk,
            sexes[spk], RTVC, f"samples/{name}.mp3", LIBRI_LICENCE, None, cut=False)
    # CMU ARCTIC (pyroomacoustics)
    for spk, utt in (("aew", "a0001"), ("aew", "a0002"), ("aew", "a0003"), ("axb", "a0004"),
                     ("axb", "a0005"), ("axb", "a0006")):
        add(f"arctic-{spk}-{utt}", "CMU ARCTIC", spk, ARCTIC_SEX[spk], PYROOM,
            f"examples/input_samples/cmu_arctic_us_{spk}_{utt}.wav", ARCTIC_LICENCE,
            ARCTIC_PROMPTS[utt], cut=False)
    # VCTK (msc-project: 48 kHz WAV; its transcripts file per speaker)
    for utt, (spk, sex, text) in VCTK_MSC.items():
        add(f"vctk-{utt}", "VCTK", spk, sex, MSC, f"docs/vctk/samples/{utt}.wav", VCTK_LICENCE,
            text, cut=False)
    for name, (spk, sex) in VCTK_RTVC.items():
        add(f"vctk-{name}", "VCTK (MP3, Real-Time-Voice-Cloning samples)", spk, sex, RTVC,
            f"samples/{name}.mp3", VCTK_LICENCE, None, cut=False)

    total = write_manifest(out, clips)
    n_f = sum(c.sex == "female" for c in clips)
    print(f"{len(clips)} clips ({n_f} female), {len({(c.dataset[:5], c.speaker) for c in clips})}"
          f" speakers, {sum(c.duration_s for c in clips):.0f} s, {total / 1e6:.2f} MB",
          file=sys.stderr)


if __name__ == "__main__":
    main()
