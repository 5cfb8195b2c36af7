"""Fit the offline gender model (src/vocencebench/probes/gender_model.json) and report its
accuracy: held out on the real-speech validation set, speaker-disjoint cross-validated on all
real clips, across 16 → 8 kHz delivery, and on the eSpeak calibration set.

Run (the pool comes from gender_pool.py; scikit-learn is in the dev extra):

    PYTHONPATH=src python benchmarks/real_speech/fit_gender.py --pool /tmp/vocence-gender-pool \
        [--write] [--cv]

Training data: the pool (LibriSpeech train-clean-100 readers that are NOT in
tests/data/real_speech: 425 excerpts of 162 readers, 211 female) and 90 eSpeak clips
(15 voices × pitch 20/50/80 × 2 sentences that the calibration set does not use). Features
are the probe's own (``acoustic.analyse`` and ``gender_model.cepstra``): the octave-guarded
median F0 and the 19 cepstra of every voiced 10 ms frame. Model: one diagonal Gaussian
mixture per sex (16 components, scikit-learn ``GaussianMixture``, ``random_state=0``, every
third frame of the training clips), then a logistic regression of the sex on (semitones of F0
re 165 Hz, mean frame log-likelihood ratio), the ratio taken out-of-fold (3 speaker-disjoint
folds) so the regression sees ratios of speakers the mixtures have not seen. ``--write``
writes the weights module; ``--cv`` adds the 10-fold speaker-disjoint cross-validation over
all real clips (pool + validation set; the eSpeak clips stay in every training fold), a few
minutes.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import realspeech as rs
from vocencebench.probes import acoustic as ac
from vocencebench.probes import gender_model as gm
from vocencebench.probes import voice

FloatArray = npt.NDArray[np.float64]
COMPONENTS = 16
SUBSAMPLE = 3
SEED = 0
WEIGHTS = Path(__file__).resolve().parents[2] / "src/vocencebench/probes/gender_model.json"

ESPEAK_VOICES = {"en-us": "male", "en": "male", **{f"en-us+m{k}": "male" for k in range(1, 9)},
                 **{f"en-us+f{k}": "female" for k in range(1, 6)}}
#: The eSpeak calibration set (docs/probes.md): 15 voices × pitch 20/50/80 × these sentences.
CALIBRATION_TEXTS = ("Could you pass me the salt and the pepper, please?",
                     "We will meet at the station before the train leaves.",
                     "My sister bought a new bicycle for the summer holidays.",
                     "The results came back clear, thank you doctor.")
#: eSpeak training sentences (not in the calibration set).
TRAINING_TEXTS = ("Please remember to water the plants while I am away.",
                  "The library closes early on Sundays, so we should hurry.")


class Clip:
    """One clip's features at 16 kHz (its own rate) and after resampling to 8 kHz."""

    def __init__(self, cid: str, speaker: str, sex: str, source: str, x: FloatArray,
                 rate: int) -> None:
        self.id, self.speaker, self.sex, self.source = cid, speaker, sex, source
        self.female = sex == "female"
        self.st16, self.c16 = features(rs.make_audio(x, rate, cid))
        self.st8, self.c8 = features(rs.make_audio(rs.resample(x, rate, 8000), 8000, cid))


def features(audio: Any) -> tuple[float, FloatArray]:
    a = ac.analyse(audio)
    if a.median_f0 is None:
        raise SystemExit(f"{audio.name}: no F0")
    x, rate = voice.samples_for_analysis(audio)
    c, t = gm.cepstra(audio, x, rate)
    return 12.0 * math.log2(a.median_f0 / gm.F0_MID_HZ), np.asarray(c[a.voiced_mask(t)])


def load(pool: Path) -> list[Clip]:
    import soundfile as sf

    from vocencebench.audio import load_audio
    from vocencebench.tts import EspeakSettings, render_many

    clips = []
    for c in rs.manifest():
        a = c.audio()
        clips.append(Clip(c.id, f"{c.dataset[:6]}:{c.speaker}", c.sex, "validation",
                          np.asarray(a.samples, dtype=np.float64), a.sample_rate))
    with open(pool / "pool.jsonl", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    for r in rows:
        x, rate = sf.read(pool / r["file"], dtype="float64")
        clips.append(Clip(r["id"], f"Librisp:{r['speaker']}", r["sex"], "pool", np.asarray(x),
                          int(rate)))
    for source, texts in (("espeak-calibration", CALIBRATION_TEXTS),
                          ("espeak-training", TRAINING_TEXTS)):
        keys = [(v, p, t) for v in ESPEAK_VOICES for p in (20, 50, 80) for t in texts]
        wavs = render_many([(t, EspeakSettings(voice=v, pitch=p)) for v, p, t in keys],
                               workers=2)
        for (v, p, t), w in zip(keys, wavs, strict=True):
            a = load_audio(w)
            clips.append(Clip(f"{source}-{v}-{p}-{texts.index(t)}", f"espeak:{v}",
                              ESPEAK_VOICES[v], source, np.asarray(a.samples, dtype=np.float64),
                              a.sample_rate))
    return clips


def fit_mixtures(train: list[Clip]) -> tuple[Any, Any]:
    from sklearn.mixture import GaussianMixture

    out = []
    for female in (True, False):
        x = np.vstack([c.c16[::SUBSAMPLE] for c in train if c.female == female])
        out.append(GaussianMixture(COMPONENTS, covariance_type="diag", random_state=SEED,
                                   max_iter=100, reg_covar=1e-3).fit(x))
    return out[0], out[1]


def llr(mix: tuple[Any, Any], c: FloatArray) -> float:
    return float(np.mean(mix[0].score_samples(c) - mix[1].score_samples(c)))


class Model:
    """Mixtures + logistic regression, fitted on ``train`` (stacked, out-of-fold ratios)."""

    def __init__(self, train: list[Clip]) -> None:
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GroupKFold

        y = np.array([c.female for c in train], dtype=int)
        groups = np.array([c.speaker for c in train])
        ratio = np.zeros(len(train))
        for a, b in GroupKFold(n_splits=3).split(ratio, y, groups):
            mix = fit_mixtures([train[i] for i in a])
            ratio[b] = [llr(mix, train[i].c16) for i in b]
        st = np.array([c.st16 for c in train])
        self.lr = LogisticRegression(C=1.0).fit(np.column_stack([st, ratio]), y)
        self.f0_only = LogisticRegression(C=1.0).fit(st[:, np.newaxis], y)
        self.mix = fit_mixtures(train)

    def female(self, clips: list[Clip], rate: int = 16) -> npt.NDArray[np.bool_]:
        st = np.array([c.st16 if rate == 16 else c.st8 for c in clips])
        r = np.array([llr(self.mix, c.c16 if rate == 16 else c.c8) for c in clips])
        return np.asarray(self.lr.predict(np.column_stack([st, r])) == 1)


def report(name: str, clips: list[Clip], female: npt.NDArray[np.bool_]) -> str:
    y = np.array([c.female for c in clips])
    ok = female == y
    return (f"{name}: {ok.mean():.1%} ({ok.sum()}/{len(ok)}; women {ok[y].mean():.1%}, "
            f"men {ok[~y].mean():.1%})")


def write(model: Model, n_train: dict[str, int]) -> None:
    """Write the fitted weights as the package's data file (numbers to 6 significant digits,
    one vector a line)."""
    import sklearn

    def vector(values: Any) -> str:
        return json.dumps([float(f"{v:.6g}") for v in values])

    def mixture(g: Any) -> str:
        def rows(a: FloatArray) -> str:
            return ",\n".join(f"   {vector(r)}" for r in a)
        return (f'{{\n  "weights": {vector(g.weights_)},\n  "means": [\n{rows(g.means_)}\n  ],\n'
                f'  "variances": [\n{rows(g.covariances_)}\n  ]\n }}')

    b, (w_f0, w_llr) = float(model.lr.intercept_[0]), (float(v) for v in model.lr.coef_[0])
    about = (
        "Weights of the offline gender model (vocencebench.probes.gender_model). GENERATED by "
        "benchmarks/real_speech/fit_gender.py --write; do not edit by hand. Training data: "
        f"{n_train['pool']} excerpts of LibriSpeech train-clean-100 readers outside the "
        "validation set (benchmarks/real_speech/gender_pool.py; github:resemble-ai/Resemblyzer @ "
        f"15d828ed, CC BY 4.0) and {n_train['espeak']} eSpeak NG clips (15 voices, pitch "
        "20/50/80, two sentences outside the calibration set). scikit-learn "
        f"{sklearn.__version__}, GaussianMixture ({COMPONENTS} diagonal components, "
        f"random_state={SEED}), LogisticRegression(C=1).")
    scalars = {"about": about, "bias": b, "w_f0": w_f0, "w_llr": w_llr,
               "f0_only_bias": float(model.f0_only.intercept_[0]),
               "f0_only_w_f0": float(model.f0_only.coef_[0][0])}
    head = ",\n".join(f" {json.dumps(k)}: {json.dumps(v if k == 'about' else float(f'{v:.6g}'))}"
                      for k, v in scalars.items())
    text = (f"{{\n{head},\n \"female\": {mixture(model.mix[0])},\n"
            f" \"male\": {mixture(model.mix[1])}\n}}\n")
    json.loads(text)  # the writer's own check: the file is JSON
    WEIGHTS.write_text(text, encoding="utf-8")
    print(f"wrote {WEIGHTS}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pool", type=Path, required=True)
    ap.add_argument("--write", action="store_true", help="write the weights module")
    ap.add_argument("--cv", action="store_true", help="10-fold speaker-disjoint CV (slow)")
    args = ap.parse_args()
    clips = load(args.pool)
    by = {s: [c for c in clips if c.source == s] for s in
          ("validation", "pool", "espeak-calibration", "espeak-training")}
    train = by["pool"] + by["espeak-training"]
    model = Model(train)
    if args.write:
        write(model, {"pool": len(by["pool"]), "espeak": len(by["espeak-training"])})
    val = by["validation"]
    p16, p8 = model.female(val, 16), model.female(val, 8)
    print(report("held-out validation set (110 clips, speakers not in training)", val, p16))
    print(report("same at 8 kHz", val, p8) + f"; labels changed 16 → 8 kHz: "
          f"{int((p16 != p8).sum())}/{len(val)}")
    print(report("eSpeak calibration set (sentences not in training)", by["espeak-calibration"],
                 model.female(by["espeak-calibration"])))
    st = np.array([[c.st16] for c in val])
    print(report("F0 alone (same training data)", val, model.f0_only.predict(st) == 1))
    if args.cv:
        from sklearn.model_selection import GroupKFold

        real = by["validation"] + by["pool"]
        y = np.array([c.female for c in real], dtype=int)
        groups = np.array([c.speaker for c in real])
        pred = np.zeros(len(real), dtype=bool)
        for a, b in GroupKFold(n_splits=10).split(y, y, groups):
            m = Model([real[i] for i in a] + by["espeak-training"])
            pred[b] = m.female([real[i] for i in b])
        print(report(f"10-fold speaker-disjoint CV, all real clips ({len(set(groups))} "
                     "speakers)", real, pred))
        print(report("  of which the validation set", val, pred[:len(val)]))


if __name__ == "__main__":
    main()
