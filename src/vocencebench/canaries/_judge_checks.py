"""The judge on the canaries: each clean clip against its degraded copies, in both orders
(cached), and the aggregate verdicts (clean-clip rate, order flips, unparsable answers)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..cache import cache_key
from ..errors import JudgeResponseError
from ..traits import NATURALNESS
from ._clips import canary_clips
from ._constants import (
    CANARY_VERSION,
    JUDGE_INSTRUCTION,
    JUDGE_MAX_FLIP_RATE,
    JUDGE_MAX_UNPARSABLE_RATE,
    JUDGE_MIN_CLEAN_RATE,
)
from ._edits import judge_pairs
from ._report import CanaryCheck

if TYPE_CHECKING:
    from ..judge import Judge

__all__ = ["judge_call_plan", "judge_checks"]


class _CountingBackend:
    """Wraps a judge backend and counts its calls (every answer, valid or not)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model: str = str(inner.model)
        self.calls = 0

    def complete(self, request: Any) -> Any:
        self.calls += 1
        return self.inner.complete(request)

    def __getattr__(self, name: str) -> Any:  # record_failure, usage, ... go to the backend
        return getattr(self.inner, name)


def _unit_key(judge: Judge, clean: bytes, bad: bytes, order: str) -> str:
    """The cache key of one canary judgement (one pair, one order)."""
    return cache_key({
        "canary": CANARY_VERSION, "kind": "judge", "clean": hashlib.sha256(clean)
        .hexdigest(), "degraded": hashlib.sha256(bad).hexdigest(), "order": order,
        "model": judge.model, "prompt_version": judge.prompt_version,
        "temperature": judge.temperature,
        "max_invalid_retries": judge.max_invalid_retries})


def judge_call_plan(judge: Judge, cache: Any) -> list[tuple[bool, str, str, float]]:
    """The canary judgements a run asks of ``judge`` (what a dry run adds to its count of
    judge calls, one call each when the answer parses): per judgement, (already in
    ``cache``, the script, the voice request, both clips' seconds); the dimension is
    naturalness, the category ``everyday``."""
    from ..audio import wav_duration_s

    texts = {c.key: c.text for c in canary_clips()}
    out = []
    for key, _, clean, bad in judge_pairs():
        seconds = (wav_duration_s(clean) or 0.0) + (wav_duration_s(bad) or 0.0)
        for order in ("ab", "ba"):
            hit = cache is not None and isinstance(
                cache.get_json("verdicts", _unit_key(judge, clean, bad, order)), Mapping)
            out.append((hit, texts[key], JUDGE_INSTRUCTION, seconds))
    return out


def judge_checks(judge: Judge, cache: Any) -> tuple[list[CanaryCheck], float, float, float,
                                                     bool]:
    """Naturalness pairs in both orders: checks, flip rate, unparsable rate, clean rate,
    all cached."""
    from ..judge import Judge as JudgeCls

    counting = _CountingBackend(judge.backend)
    probe_judge = JudgeCls(counting, registry=judge.registry,
                           max_invalid_retries=judge.max_invalid_retries,
                           temperature=judge.temperature, validate_audio=judge.validate_audio)
    model = judge.model
    inst = f"judge:{model}"
    texts = {c.key: c.text for c in canary_clips()}
    checks: list[CanaryCheck] = []
    answers = clean_wins = first_wins = degraded_wins = flips = pairs_both = 0
    calls = invalid = 0
    all_cached = True
    for key, how, clean, bad in judge_pairs():
        winners: dict[str, str | None] = {}
        for order in ("ab", "ba"):
            ukey = _unit_key(judge, clean, bad, order)
            hit = cache.get_json("verdicts", ukey) if cache is not None else None
            if isinstance(hit, Mapping):
                winners[order] = str(hit["winner"])
                calls += int(hit["calls"])
                invalid += int(hit["calls"]) - 1
                continue
            all_cached = False
            before = counting.calls
            try:
                sj = probe_judge.judge_once(
                    text=texts[key], instruction=JUDGE_INSTRUCTION, audio_a=clean,
                    audio_b=bad, dimension=NATURALNESS, order=order, vote=0,
                    category="everyday")
            except JudgeResponseError:
                used = counting.calls - before
                calls += used
                invalid += used
                winners[order] = None
                continue
            used = counting.calls - before
            calls += used
            invalid += used - 1
            winner = sj.judgements[NATURALNESS].winner
            winners[order] = winner
            if cache is not None:
                cache.put_json("verdicts", ukey, {"winner": winner, "calls": used})
        for order, w in winners.items():
            if w is None:
                continue
            answers += 1
            clean_wins += w == "a"
            degraded_wins += w == "b"
            first_wins += w == ("a" if order == "ab" else "b")
        both = [w for w in winners.values() if w is not None]
        if len(both) == 2:
            pairs_both += 1
            flips += both[0] != both[1]
        ok = all(w == "a" for w in winners.values()) and len(both) == 2
        shown = ", ".join(f"{o.upper()}: {('clean' if w == 'a' else 'degraded' if w == 'b' else w) if w else 'unparsable'}"  # noqa: E501
                          for o, w in winners.items())
        checks.append(CanaryCheck(
            name=f"naturalness: clean vs {how} ({key})", trait=NATURALNESS, instrument=inst,
            clip=key, expected="clean clip wins in both orders", measured=shown, passed=ok,
            message=f"judge {model} chose {shown} for clean vs {how} ({key})"))
    flip_rate = flips / pairs_both if pairs_both else 1.0
    unparsable = invalid / calls if calls else 0.0
    clean_rate = clean_wins / answers if answers else 0.0
    # Aggregate verdicts: these carry the diagnosis; the per-pair checks are advisory detail.
    if answers and first_wins / answers >= 0.9 and flip_rate > JUDGE_MAX_FLIP_RATE:
        why = (f"judge {model} looks position-biased: it chose the clip heard first in "
               f"{first_wins} of {answers} answers (order-flip rate {flip_rate:.2f}); use a "
               "stronger judge model, keep both orders (no --no-swap), or check the prompt")
    elif answers and degraded_wins > clean_wins:
        why = (f"judge {model} prefers the degraded clip: it chose the band-limited, clipped "
               f"or noisy version in {degraded_wins} of {answers} answers; check that the "
               "audio reaches the model and that the score scale is not inverted")
    else:
        why = (f"judge {model} chose the clean clip in {clean_wins} of {answers} answers "
               f"(needs ≥ {100 * JUDGE_MIN_CLEAN_RATE:.0f} %); it cannot hear these "
               "degradations reliably: use a stronger audio judge")
    checks = [CanaryCheck(c.name, c.trait, c.instrument, c.clip, c.expected, c.measured,
                          c.passed, False, c.message) for c in checks]
    checks.append(CanaryCheck(
        name="judge prefers the clean clip", trait=NATURALNESS, instrument=inst, clip="*",
        expected=f"≥ {100 * JUDGE_MIN_CLEAN_RATE:.0f} % of answers", measured=clean_rate,
        passed=clean_rate >= JUDGE_MIN_CLEAN_RATE and answers > 0,
        message=why if clean_rate < JUDGE_MIN_CLEAN_RATE or not answers else
        f"clean clip chosen in {clean_wins} of {answers} answers"))
    checks.append(CanaryCheck(
        name="judge order-flip rate", trait=NATURALNESS, instrument=inst, clip="*",
        expected=f"≤ {JUDGE_MAX_FLIP_RATE:.2f}", measured=flip_rate,
        passed=flip_rate <= JUDGE_MAX_FLIP_RATE,
        message=(why if first_wins / max(answers, 1) >= 0.9 else
                 f"judge {model} changed its winner with the presentation order in {flips} "
                 f"of {pairs_both} pairs (order-flip rate {flip_rate:.2f}, limit "
                 f"{JUDGE_MAX_FLIP_RATE:.2f}); its verdicts would mostly be ties")
        if flip_rate > JUDGE_MAX_FLIP_RATE else
        f"winner changed with the order in {flips} of {pairs_both} pairs"))
    checks.append(CanaryCheck(
        name="judge unparsable-answer rate", trait=NATURALNESS, instrument=inst, clip="*",
        expected=f"≤ {JUDGE_MAX_UNPARSABLE_RATE:.2f}", measured=unparsable,
        passed=unparsable <= JUDGE_MAX_UNPARSABLE_RATE,
        message=(f"judge {model} gave {invalid} unparsable answers in {calls} calls "
                 f"({unparsable:.2f}, limit {JUDGE_MAX_UNPARSABLE_RATE:.2f}); the run would "
                 "pay for retries and end incomplete: check the model supports JSON output")
        if unparsable > JUDGE_MAX_UNPARSABLE_RATE else
        f"{invalid} unparsable answers in {calls} calls"))
    return checks, flip_rate, unparsable, clean_rate, all_cached
