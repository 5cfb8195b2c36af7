"""Fit the gender heuristic's weights on the real-speech set and report speaker-disjoint
cross-validated accuracy, the 16 kHz → 8 kHz label stability and the eSpeak calibration.

Run:  PYTHONPATH=src python benchmarks/real_speech/fit_gender.py

Features per clip (both at the clip's rate and after resampling to 8 kHz, so the fit sees
both deliveries): semitones of the median F0 re 165 Hz, and formant dispersion
(F3 − F1) / 2 in units of 100 Hz re GENDER_FD_MID_HZ, clamped as the probe clamps it. The model
is a logistic regression (scikit-learn, C = 1); accuracy is from 10-fold GroupKFold with
speakers as groups (no speaker is in both the training and the test fold). The printed
weights go into ``probes/acoustic.py`` (GENDER_BIAS, GENDER_W_F0, GENDER_W_FD).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
import realspeech as rs
from vocencebench.probes import acoustic as ac


def features(audio: object) -> tuple[float, float] | None:
    a = ac.analyse(audio)  # type: ignore[arg-type]
    if a.median_f0 is None:
        return None
    fm = ac.formants(audio, a)  # type: ignore[arg-type]
    fd = ac.GENDER_FD_MID_HZ if fm is None else (fm[2] - fm[0]) / 2
    fd = min(ac.GENDER_FD_MAX_HZ, max(ac.GENDER_FD_MIN_HZ, fd))
    return 12 * math.log2(a.median_f0 / ac.GENDER_F0_MID_HZ), (fd - ac.GENDER_FD_MID_HZ) / 100


def espeak_clips() -> list[tuple[object, str]]:
    from vocencebench.audio import load_audio
    from vocencebench.tts import EspeakSettings, synthesize_many

    voices = {"en-us": "male", "en": "male", **{f"en-us+m{k}": "male" for k in range(1, 9)},
              **{f"en-us+f{k}": "female" for k in range(1, 6)}}
    texts = ("Could you pass me the salt and the pepper, please?",
             "We will meet at the station before the train leaves.",
             "My sister bought a new bicycle for the summer holidays.",
             "The results came back clear, thank you doctor.")
    keys = [(v, p, t) for v in voices for p in (20, 50, 80) for t in texts]
    wavs = synthesize_many([(t, EspeakSettings(voice=v, pitch=p)) for v, p, t in keys],
                           workers=2)
    return [(load_audio(w), voices[v]) for (v, _, _), w in zip(keys, wavs, strict=True)]


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold

    rows = []
    for c in rs.manifest():
        a = c.audio()
        x = np.asarray(a.samples, dtype=np.float64)
        f16 = features(a)
        f8 = features(rs.make_audio(rs.resample(x, a.sample_rate, 8000), 8000))
        if f16 is None or f8 is None:
            print("no F0:", c.id)
            continue
        rows.append((c, f16, f8))
    y = np.array([r[0].sex == "female" for r in rows], dtype=int)
    groups = np.array([f"{r[0].dataset[:6]}:{r[0].speaker}" for r in rows])
    x16 = np.array([r[1] for r in rows])
    x8 = np.array([r[2] for r in rows])
    for name, cols in (("F0 only", [0]), ("F0 + dispersion", [0, 1])):
        pred16 = np.zeros(len(rows), dtype=int)
        pred8 = np.zeros(len(rows), dtype=int)
        for tr, te in GroupKFold(n_splits=10).split(x16, y, groups):
            m = LogisticRegression(C=1.0).fit(
                np.concatenate([x16[tr][:, cols], x8[tr][:, cols]]),
                np.concatenate([y[tr], y[tr]]))
            pred16[te] = m.predict(x16[te][:, cols])
            pred8[te] = m.predict(x8[te][:, cols])
        acc = (pred16 == y).mean()
        fem = (pred16[y == 1] == 1).mean()
        mal = (pred16[y == 0] == 0).mean()
        print(f"{name}: CV accuracy {acc:.3f} (women {fem:.3f}, men {mal:.3f}), "
              f"8 kHz accuracy {(pred8 == y).mean():.3f}, labels changed 16→8 kHz "
              f"{(pred8 != pred16).mean():.3f}  (n = {len(rows)}, {len(set(groups))} speakers)")
    full = LogisticRegression(C=1.0).fit(np.concatenate([x16, x8]), np.concatenate([y, y]))
    b = float(full.intercept_[0])
    w0, w1 = (float(v) for v in full.coef_[0])
    print(f"fit on all: GENDER_BIAS = {b:.4f}, GENDER_W_F0 = {w0:.4f}, GENDER_W_FD = {w1:.4f}")
    # the probe as shipped (its constants), on the real set and eSpeak
    probe = ac.GenderHeuristicProbe()
    from vocencebench.schema import Item

    def item(g: str) -> Item:
        return Item(id="g", instruction="", text="x", traits={"gender": g}, difficulty=0)

    real = [(probe.measure(r[0].audio(), item("male"))["gender"].label, r[0].sex) for r in rows]
    print(f"shipped weights on the real set (training data): "
          f"{np.mean([a == b for a, b in real]):.3f}")
    esp = espeak_clips()
    got = [probe.measure(a, item("male"))["gender"].label == s for a, s in esp]
    print(f"shipped weights on eSpeak ({len(esp)} clips): {np.mean(got):.3f}")


if __name__ == "__main__":
    main()
