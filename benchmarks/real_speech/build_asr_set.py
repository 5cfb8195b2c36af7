"""Assemble tests/data/asr_speech/ (real read speech with PUBLISHED transcripts, for the
real-Whisper tests of the intelligibility gate) from public repositories.

Run (needs the repositories as bare git mirrors, e.g. from the search tool's ``fetch``):

    python benchmarks/real_speech/build_asr_set.py --mirrors /work/.mirror \
        [--out tests/data/asr_speech] [--real-speech tests/data/real_speech]

Every transcript is the dataset's own (CMU ARCTIC's cmuarctic.data, VCTK's txt, LJSpeech's
metadata.csv, LibriSpeech's trans.txt line, the Kathleen dataset's per-file txt) or, for the
JFK clip, the published text of the speech; none is an ASR output. The clips were chosen by
the rules written next to each source below, before any recogniser was run on them.

The 12 clips of tests/data/real_speech whose transcript is the dataset's own (6 CMU ARCTIC,
6 VCTK) are referenced, not copied: their manifest rows point at ``../real_speech/<file>``.
Every other source file is read with ``git --git-dir=<mirror> show <commit>:<path>`` (so
nothing but the pinned commit is used; a Git LFS pointer is refused), decoded, mixed to mono,
resampled to 16 kHz (soxr HQ) when needed and written as 16-bit FLAC. ``manifest.jsonl``
records every clip's provenance, labels and transcript, and ``pcm_sha256`` (the SHA-256 of its
16-bit samples, little-endian) so a rebuild can be checked bit for bit whatever FLAC encoder
version wrote the file.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import soundfile as sf
from build_set import (
    LIBRI_LICENCE,
    MSC,
    RATE,
    VCTK_LICENCE,
    decode,
    git_dir,
    git_show,
    libri_speakers,
    write,
    write_manifest,
)

# repository, commit (40 hex)
WHISPER = ("openai/whisper", "c0d2f624c09dc18e709e37c2ad90c039a4eb72a2")
KATHLEEN = ("rhasspy/dataset-voice-cathy", "c51cb971036a127359b43c621f26ca5081eab13e")
#: the dataset's first commit: its cmuarctic.data is CMU's file unchanged (the later commit
#: c51cb97 edits eight prompts to what Kathleen read, e.g. numbers written out)
KATHLEEN_FIRST = ("rhasspy/dataset-voice-cathy", "3d825072be5be3b262bc3d577a901c9b6f17ad04")
COQUI = ("coqui-ai/TTS", "dbf1a08a0d4e47fdad6172e433eeb34bc6b13b4e")
AUTOVC = ("auspicious3000/autovc", "c1827a60e83e6d26030b8953843b2f7cf2bd36db")
LHOTSE = ("lhotse-speech/lhotse", "a79cc864e4275f6342bb94261313526a14d385fb")

LJ_LICENCE = "Public domain (LJ Speech Dataset, Keith Ito 2017; LibriVox recordings)"
KATHLEEN_LICENCE = "CC0-1.0 (Voice Dataset Kathleen, Rhasspy / Michael Hansen)"
JFK_LICENCE = "Public domain (US Government work: J. F. Kennedy's inaugural address, 1961)"

#: Kathleen (rhasspy/dataset-voice-cathy): a native US English woman aged 50-70 reading the
#: CMU ARCTIC prompts (48 kHz stereo). Rule: every tenth prompt a0010..a0050 and, where the
#: prompt has several takes, the last one (highest timestamp in the name).
KATHLEEN_PROMPTS = ("arctic_a0010", "arctic_a0020", "arctic_a0030", "arctic_a0040",
                    "arctic_a0050")
#: LJ Speech (coqui-ai/TTS tests/data/ljspeech): the five first utterances of the eight its
#: metadata.csv transcribes (LJ001-0001..0008); one US English woman.
LJ_IDS = ("LJ001-0001", "LJ001-0002", "LJ001-0003", "LJ001-0004", "LJ001-0005")
#: VCTK (auspicious3000/autovc wavs/, 16 kHz): its four speakers read the same ten prompts
#: (the rainbow passage / elicitation paragraph); five different prompts from each man and
#: three from each woman, so that the set's men and women are closer in number and every
#: prompt is read by a man. Sex, age and accent from VCTK's speaker-info (msc-project's
#: docs/vctk/vctk_meta_data).
VCTK_AUTOVC = {
    "p225": ("female", ("011", "019", "024")),
    "p226": ("male", ("003", "008", "016", "021", "023")),
    "p227": ("male", ("005", "011", "019", "022", "024")),
    "p228": ("female", ("005", "016", "022")),
}
#: LibriSpeech dev-clean in lhotse's fixtures: only 2412-153948-0000 carries its own
#: transcript there (the supervision attached to 2412-153948-0001 is 174-168635-0001's text,
#: so that file is not used).
LIBRI_LHOTSE = "2412-153948-0000"
#: The JFK clip openai/whisper ships: the published text of the passage (JFK Presidential
#: Library's transcript of the inaugural address, 20 January 1961).
JFK_TEXT = ("And so, my fellow Americans, ask not what your country can do for you, "
            "ask what you can do for your country.")


@dataclass
class Clip:
    id: str
    file: str
    dataset: str
    speaker: str
    sex: str
    accent: str
    source_repo: str
    source_commit: str
    source_path: str
    source_format: str
    licence: str
    duration_s: float
    sample_rate: int
    transcript: str
    transcript_source: str
    pcm_sha256: str






def git_ls(mirrors: Path, repo: str, commit: str, path: str) -> list[str]:
    return subprocess.run(["git", f"--git-dir={git_dir(mirrors, repo)}", "ls-tree", "-r",
                           "--name-only", commit, path], check=True, capture_output=True,
                          text=True).stdout.split()




def pcm_sha256(path: Path) -> str:
    x, rate = sf.read(path, dtype="int16", always_2d=False)
    if rate != RATE or x.ndim != 1:
        raise SystemExit(f"{path} is not 16 kHz mono")
    return hashlib.sha256(x.astype("<i2").tobytes()).hexdigest()




def arctic_prompts(mirrors: Path, src: tuple[str, str]) -> dict[str, str]:
    text = git_show(mirrors, *src, "cmuarctic.data").decode("utf-8")
    return dict(re.findall(r'^\( (arctic_[ab]\d{4}) "(.*)" \)\s*$', text, flags=re.M))


def vctk_transcripts(mirrors: Path, spk: str) -> dict[str, str]:
    """VCTK's txt for one speaker, as msc-project's per-speaker dump gives it."""
    text = git_show(mirrors, *MSC, f"docs/vctk/vctk_transcripts/transcript_{spk[1:]}")
    rows = csv.reader(io.StringIO(text.decode("utf-8")))
    next(rows)
    return {r[0]: " ".join(r[1].split()) for r in rows if len(r) >= 2}


def vctk_speakers(mirrors: Path) -> dict[str, tuple[str, str, str]]:
    """speaker → (sex, age, accent/region) from VCTK's speaker-info (msc-project's copy)."""
    text = git_show(mirrors, *MSC, "docs/vctk/vctk_meta_data").decode("utf-8")
    rows = csv.DictReader(io.StringIO(text))
    return {f"p{r['id']}": ({"F": "female", "M": "male"}[r["gender"]], r["age"],
                            f"{r['accents']} ({r['region']})" if r["region"] else r["accents"])
            for r in rows}



#: accents of the CMU ARCTIC speakers in tests/data/real_speech (CMU's speaker notes; the
#: VCTK speakers' come from speaker-info)
ARCTIC_ACCENT = {"aew": "US English", "axb": "Indian English"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirrors", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path("tests/data/asr_speech"))
    ap.add_argument("--real-speech", type=Path, default=Path("tests/data/real_speech"))
    args = ap.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    for f in out.glob("*.flac"):
        f.unlink()
    clips: list[Clip] = []
    original_prompts = arctic_prompts(args.mirrors, KATHLEEN_FIRST)
    info = vctk_speakers(args.mirrors)

    def add(cid: str, dataset: str, speaker: str, sex: str, accent: str,
            src: tuple[str, str], path: str, licence: str, transcript: str,
            transcript_source: str) -> None:
        y, fmt = decode(git_show(args.mirrors, src[0], src[1], path))
        f = out / write(out, cid, y)
        clips.append(Clip(cid, f.name, dataset, speaker, sex, accent, f"github:{src[0]}",
                          src[1], path, fmt, licence, round(y.shape[0] / RATE, 3), RATE,
                          transcript, transcript_source, pcm_sha256(f)))
        print(f"{cid}: {sex} {y.shape[0] / RATE:.2f} s  {transcript!r}", file=sys.stderr)

    # 1. the 12 clips of tests/data/real_speech that carry their dataset's transcript
    real = args.real_speech
    rel = Path("..") / real.name
    for line in (real / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["transcript_source"] != "dataset":
            continue
        if row["dataset"] == "CMU ARCTIC":
            utt = "arctic_" + row["id"].rsplit("-", 1)[1]
            if original_prompts[utt] != row["transcript"]:
                raise SystemExit(f"{row['id']}: transcript differs from cmuarctic.data")
            tsrc = (f"dataset: CMU ARCTIC cmuarctic.data line {utt} (copy in "
                    f"github:{KATHLEEN_FIRST[0]}@{KATHLEEN_FIRST[1][:8]}:cmuarctic.data)")
            accent = ARCTIC_ACCENT[row["speaker"]]
        else:
            utt = row["id"].split("-", 1)[1]
            vt = vctk_transcripts(args.mirrors, row["speaker"])[utt]
            # real_speech's copy drops the quotation marks p376's txt wraps its lines in
            if vt.strip('"') != row["transcript"]:
                raise SystemExit(f"{row['id']}: transcript differs from VCTK's txt")
            tsrc = (f"dataset: VCTK txt/{row['speaker']}/{utt}.txt (msc-project "
                    f"docs/vctk/vctk_transcripts/transcript_{row['speaker'][1:]})")
            if info[row["speaker"]][0] != row["sex"]:
                raise SystemExit(f"{row['id']}: speaker-info says {info[row['speaker']][0]}")
            accent = info[row["speaker"]][2]
        clips.append(Clip(row["id"], str(rel / row["file"]), row["dataset"], row["speaker"],
                          row["sex"], accent, row["source_repo"],
                          row["source_commit"], row["source_path"], row["source_format"],
                          row["licence"], row["duration_s"], row["sample_rate"],
                          row["transcript"], tsrc, pcm_sha256(real / row["file"])))

    # 2. JFK, the clip openai/whisper tests with
    add("jfk-inaugural-1961", "JFK inaugural address (openai/whisper tests/jfk.flac)",
        "jfk", "male", "US English (Boston)", WHISPER, "tests/jfk.flac", JFK_LICENCE,
        JFK_TEXT, "published: text of the inaugural address, 20 January 1961 (JFK "
        "Presidential Library transcript), the passage the clip holds")

    # 3. Kathleen (CMU ARCTIC prompts, CC0)
    names = git_ls(args.mirrors, *KATHLEEN, "data")
    for prompt in KATHLEEN_PROMPTS:
        takes = sorted(n[:-4] for n in names
                       if n.endswith(".wav") and n.startswith(f"data/{prompt}_"))
        stem = takes[-1]
        text = git_show(args.mirrors, *KATHLEEN, stem + ".txt").decode("utf-8").strip()
        add(f"kathleen-{prompt[7:]}", "Voice Dataset Kathleen (CMU ARCTIC prompts)",
            "kathleen", "female", "US English", KATHLEEN, stem + ".wav", KATHLEEN_LICENCE,
            text, f"dataset: {stem}.txt (the dataset's transcript of that take)")

    # 4. LJ Speech (coqui-ai/TTS test data)
    meta = git_show(args.mirrors, *COQUI, "tests/data/ljspeech/metadata.csv").decode("utf-8")
    lj = {r.split("|")[0]: r.split("|")[2] for r in meta.splitlines() if r.count("|") >= 2}
    for uid in LJ_IDS:
        add(f"lj-{uid}", "LJ Speech", "lj", "female", "US English", COQUI,
            f"tests/data/ljspeech/wavs/{uid}.wav", LJ_LICENCE, lj[uid].strip(),
            "dataset: LJ Speech metadata.csv, normalized-transcription column "
            "(coqui-ai/TTS tests/data/ljspeech/metadata.csv)")

    # 5. VCTK (autovc samples) with VCTK's txt
    for spk, (sex, utts) in VCTK_AUTOVC.items():
        if info[spk][0] != sex:
            raise SystemExit(f"{spk}: speaker-info says {info[spk][0]}")
        txt = vctk_transcripts(args.mirrors, spk)
        for u in utts:
            utt = f"{spk}_{u}"
            add(f"vctk-{utt}", "VCTK", spk, sex, info[spk][2], AUTOVC,
                f"wavs/{spk}/{utt}.wav", VCTK_LICENCE, txt[utt],
                f"dataset: VCTK txt/{spk}/{utt}.txt (msc-project "
                f"docs/vctk/vctk_transcripts/transcript_{spk[1:]})")

    # 6. LibriSpeech dev-clean (lhotse fixture) with its trans.txt line
    manifest = json.loads(git_show(args.mirrors, *LHOTSE,
                                   "test/fixtures/mix_cut_test/overlayed_audio_cut_manifest"
                                   ".json"))
    sup = next(s for t in manifest[0]["tracks"] for s in t["cut"]["supervisions"]
               if s["id"] == LIBRI_LHOTSE)
    spk = LIBRI_LHOTSE.split("-")[0]
    add(f"ls-{LIBRI_LHOTSE}", "LibriSpeech dev-clean", spk, libri_speakers(args.mirrors)[spk],
        "not recorded (LibriVox reader)", LHOTSE,
        f"test/fixtures/mix_cut_test/audio/storage/{LIBRI_LHOTSE}.flac", LIBRI_LICENCE,
        sup["text"], "dataset: LibriSpeech dev-clean 2412-153948.trans.txt line (lhotse "
        "test/fixtures/mix_cut_test/overlayed_audio_cut_manifest.json)")

    total = write_manifest(out, clips)
    n_f = sum(c.sex == "female" for c in clips)
    print(f"{len(clips)} clips ({n_f} female), {len({(c.dataset[:4], c.speaker) for c in clips})}"
          f" speakers, {sum(c.duration_s for c in clips):.0f} s; new FLAC {total / 1e6:.2f} MB",
          file=sys.stderr)


if __name__ == "__main__":
    main()
