"""Known-answer canaries: check the instruments on clips whose answers are known, before a run.

A few reference clips ship in the package (``datasets/canaries/``: two real CMU ARCTIC
recordings, a man and a woman, and one hibari-tts clip of a woman; sources and licences in its
``manifest.json``). At run time each is edited with effects whose answer is known:

=================  ===================================  =====================================
edit               how                                  what an honest probe must report
=================  ===================================  =====================================
pitch +4 / −4 st   Praat PSOLA, formants kept           median F0 up / down by about 4 st
tempo ×1.25 / ×0.8 Praat PSOLA, pitch kept              pace value up / down by about ×1.25
gain +10 / −10 dB  a pure gain (base level −30 LUFS)    integrated loudness +10 / −10 LU
=================  ===================================  =====================================

and every probe of the set is run on the clips: it must move in the known direction by about
the known amount (:data:`DIRECTION_TOLERANCE`), and the classifying probes must give the known
labels — the man's clip male and the women's female, an adult age for all three (required);
read-speech emotion (neutral or calm) and the speaker's accent are reported but advisory (a good
accent or emotion model may still disagree on one short clip). With a judge, two of the
voices (:data:`JUDGE_VOICES`) are each paired with three degraded copies of themselves —
band-limited to 3 kHz, hard-clipped, white noise at 5 dB SNR — and judged on naturalness in
both orders: the clean clip must win.

:func:`run_canaries` returns a :class:`CanaryReport` (accuracy, order-flip rate,
unparsable-answer rate, every check with its numbers) and by default raises
:class:`~vocencebench.errors.CanaryError` (fatal) naming the failed checks and what to do.
Results are cached by clip sha256 and instrument version, so a rerun costs nothing.

The preflight of a run (:func:`run_preflight`, what :func:`vocencebench.benchmark` calls) and
of a multi-run command (:func:`preflight`), and the status line (:func:`canary_status`,
:func:`status_line`), live here too. One private module per job: ``_clips``, ``_edits``,
``_probe_checks``, ``_judge_checks``, ``_report``, ``_run`` (thresholds in ``_constants``).
"""

from __future__ import annotations

from ._clips import CanaryClip, canary_clips
from ._constants import (
    ADULT_AGE_RANGE,
    BASE_LUFS,
    CANARY_VERSION,
    DEGRADATIONS,
    DIRECTION_TOLERANCE,
    EDITS,
    JUDGE_INSTRUCTION,
    JUDGE_MAX_FLIP_RATE,
    JUDGE_MAX_UNPARSABLE_RATE,
    JUDGE_MIN_CLEAN_RATE,
    JUDGE_VOICES,
    LOUDNESS_TOLERANCE_LU,
    NOISE_SEED,
    READ_SPEECH_EMOTIONS,
)
from ._edits import FloatArray, edit_clip, judge_pairs
from ._judge_checks import judge_call_plan
from ._report import CanaryCheck, CanaryReport
from ._run import (
    canary_status,
    preflight,
    report_record,
    run_canaries,
    run_preflight,
    skipped_record,
    status_line,
)

__all__ = [
    "ADULT_AGE_RANGE",
    "BASE_LUFS",
    "CANARY_VERSION",
    "DEGRADATIONS",
    "DIRECTION_TOLERANCE",
    "EDITS",
    "JUDGE_INSTRUCTION",
    "JUDGE_MAX_FLIP_RATE",
    "JUDGE_MAX_UNPARSABLE_RATE",
    "JUDGE_MIN_CLEAN_RATE",
    "JUDGE_VOICES",
    "LOUDNESS_TOLERANCE_LU",
    "NOISE_SEED",
    "READ_SPEECH_EMOTIONS",
    "CanaryCheck",
    "CanaryClip",
    "CanaryReport",
    "FloatArray",
    "canary_clips",
    "canary_status",
    "edit_clip",
    "judge_call_plan",
    "judge_pairs",
    "preflight",
    "report_record",
    "run_canaries",
    "run_preflight",
    "skipped_record",
    "status_line",
]
