"""Every frozen number, defined once: the scoring rule's, the reports', the judge's
economics and the command line's exit statuses.

A leaf module: it imports nothing, and every other module may import it. Changing a value of
the rule changes verdicts, so each one is part of the published method
(``docs/methodology.md``) and pinned by golden tests. Units are in each comment.
"""

from __future__ import annotations

from typing import Final

#: The names of the decision rule's numbers, which :mod:`vocencebench.decide` serves too
#: (they were published there before this module held them).
RULE_NUMBERS: Final = (
    "ALPHA",
    "BOOTSTRAP_N",
    "BOOTSTRAP_SEED",
    "EPSILON",
    "MARGIN_FLOOR",
    "MARGIN_SCALE",
    "PROJECT_SEED",
    "WER_THRESHOLD",
)

__all__ = [
    *RULE_NUMBERS,
    "AGE_TOLERANCE_YEARS",
    "AGREE_BOOTSTRAP_N",
    "AGREE_CI",
    "AGREE_ITEMS",
    "AGREE_SEED",
    "BOARD_DECISIVE_CLIPS",
    "BOARD_NAME_MAX_CHARS",
    "CALIBRATION_BOOTSTRAP_N",
    "CALIBRATION_CI",
    "COMPOSITE_TOLERANCE",
    "CORPUS_SEED",
    "CORPUS_SIZE",
    "DIFFICULTY_MIX",
    "EARLY_STOP_BATCH",
    "EARLY_STOP_SLACK",
    "EXIT_BROKEN_PIPE",
    "EXIT_CHECK_FAILED",
    "EXIT_INCOMPLETE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "GATE_REPORT_CLIPS",
    "GATE_SUMMARY_CLIPS",
    "GATE_WER_BIN_EDGES",
    "GATE_WER_QUANTILES",
    "JUDGE_MAX_CALL_TOKENS",
    "JUDGE_ORDER_SEED",
    "JUDGE_SWAP_WARNING",
    "LISTEN_ITEMS",
    "LISTEN_SEED",
    "PACKAGE_VERSION",
    "REPORT_DECISIVE_CLIPS",
    "REPORT_GROUP_CLIPS_MAX",
    "REPORT_WORST_CLIPS",
    "ROBUSTNESS_EPSILONS",
    "ROBUSTNESS_FLIP_TOLERANCE",
    "ROBUSTNESS_SEED",
    "ROBUSTNESS_TAUS",
    "ROBUSTNESS_WEIGHT_DRAWS",
    "RUBRIC_MAX",
    "RULE_NUMBERS",
]

#: The installed package's version (also ``vocencebench.__version__``); cache rows and
#: output markers record it.
PACKAGE_VERSION: Final = "0.1.0"

#: The project seed, the one seed literal: the bootstrap's stream starts from it, and so do
#: the project's other seeded draws (eSpeak's and hibari's noise, the canaries' noise, the
#: red-team attacks), whose shipped clips and golden tests depend on its value.
PROJECT_SEED: Final = 3151662
#: Fixed bootstrap seed (PCG64): the project seed.
BOOTSTRAP_SEED: Final = PROJECT_SEED
#: Bootstrap resamples.
BOOTSTRAP_N: Final = 2000
#: Items in benchmark v1, the default size of a generated corpus.
CORPUS_SIZE: Final = 496
#: Seed of benchmark v1's balanced assignment: the project seed.
CORPUS_SEED: Final = PROJECT_SEED
#: Share of easy / normal / hard items in a generated corpus (496 → 174, 198, 124).
DIFFICULTY_MIX: Final = (0.35, 0.40, 0.25)
#: One-sided level: the LCB is the 100·α-th percentile of the resampled means.
ALPHA: Final = 0.05

#: Floor inside the log of the geometric mean (a zero dimension still collapses S to ~0).
EPSILON: Final = 0.01
#: Intelligibility gate: WER (a fraction) ≤ this passes (g = 1), above fails (g = 0).
WER_THRESHOLD: Final = 0.15

#: Lowest decision margin on the [0, 1] scale, just under one comparison-MOS JND (≈ 0.017).
MARGIN_FLOOR: Final = 0.015
#: The margin grows as this share of the incumbent's headroom to a perfect score.
MARGIN_SCALE: Final = 0.10

#: Full credit within ± this many years of the requested age; zero beyond twice that.
AGE_TOLERANCE_YEARS: Final = 8.0
#: Judge rubric scores run 0..RUBRIC_MAX (integers); a judged d is score / RUBRIC_MAX.
RUBRIC_MAX: Final = 3

# --------------------------------------------------------------------------- listening
# Report and listening-test sizes; none of them touches a score or a verdict.

#: Items per direction of δ = S_b − S_a whose clips a run's report plays (the most decisive).
REPORT_DECISIVE_CLIPS: Final = 8
#: Items per scored dimension with the lowest d (both systems together) a report plays.
REPORT_WORST_CLIPS: Final = 3
#: At most this many items per group of gate vetoes or of system failures (the rest are
#: counted in the section): keeps a report of a badly broken system under its size budget.
REPORT_GROUP_CLIPS_MAX: Final = 40
#: Items per direction of δ that the leaderboard page plays for each pair.
BOARD_DECISIVE_CLIPS: Final = 3
#: Longest system name a leaderboard takes, in characters: names become file names
#: (``pairs/03-NAME--NAME.scores.jsonl``), and a name past this failed only at the save.
BOARD_NAME_MAX_CHARS: Final = 64
#: Items in a blind listening test (``vocencebench listen --items``).
LISTEN_ITEMS: Final = 40
#: The listening test's sample and left/right order: seeded from the project seed.
LISTEN_SEED: Final = PROJECT_SEED
#: Resamples and two-sided level of the judge-vs-human agreement interval (calibrate).
CALIBRATION_BOOTSTRAP_N: Final = 2000
CALIBRATION_CI: Final = 0.95

# ---- verdict robustness (vocencebench.robustness): diagnostics beside the verdict, never it.

#: The ε values the robustness section re-decides with (the floor inside the composite's log;
#: EPSILON itself is among them, as the check that recomputing from d reproduces the rule).
ROBUSTNESS_EPSILONS: Final = (0.001, 0.01, 0.05)
#: The gate thresholds it re-decides with (WER fractions; WER_THRESHOLD is among them).
ROBUSTNESS_TAUS: Final = (0.10, 0.15, 0.20, 0.30)
#: Random dimension weightings (Dirichlet(1) draws) whose verdicts give the winner-flip rate.
ROBUSTNESS_WEIGHT_DRAWS: Final = 1000
#: Seed of the weight draws (PCG64 raw stream): the project seed plus one, so the weights are
#: not the raw values that also pick the bootstrap's first resamples (BOOTSTRAP_SEED).
ROBUSTNESS_SEED: Final = PROJECT_SEED + 1
#: A verdict is called robust only if at most this share of the random weightings flips it
#: (a fraction; the same 5 % error rate the one-sided LCB allows, ALPHA).
ROBUSTNESS_FLIP_TOLERANCE: Final = 0.05

# The gate report's numbers (what it shows of the gate; none of them changes a score).
#: WER quantiles the gate report gives per system (fractions of the clips heard, 0–1).
GATE_WER_QUANTILES: Final = (0.10, 0.25, 0.50, 0.75, 0.90)
#: Upper edges of the gate report's WER histogram bins (WER fractions, right-closed, so the
#: bin ending at τ holds the last clips that pass); a bin "= 0" comes first, "> 1" last.
GATE_WER_BIN_EDGES: Final = (0.05, 0.10, WER_THRESHOLD, 0.30, 0.50, 1.00)
#: Vetoed clips the summary text shows per system (report.md and report.html show up to
#: GATE_REPORT_CLIPS per system; run.json["gate"] keeps every one).
GATE_SUMMARY_CLIPS: Final = 3
GATE_REPORT_CLIPS: Final = 200

# -- the judge's economics and audit (docs/judge.md); none of these changes a verdict

#: Seed of the order in which ``--stop-when-decided`` judges the items: item i (corpus
#: position, 0-based) gets the key ``raw[i]`` = the i-th 64-bit output of
#: ``numpy.random.PCG64(JUDGE_ORDER_SEED).random_raw``, and items are judged in increasing
#: (key, i). Derived from the project seed (its last digit + 1) so the order is independent of
#: the bootstrap's own stream. It is ROBUSTNESS_SEED's stream too, and harmlessly so: a run
#: that stopped early has no robustness section, so the two uses never meet in one run.
JUDGE_ORDER_SEED: Final = PROJECT_SEED + 1
#: Most tokens one judge call can report per count (10⁹): a larger, NaN or negative count is
#: no count, and the call is metered at its pre-call estimate instead (``Usage.unreported``).
JUDGE_MAX_CALL_TOKENS: Final = 10**9
#: Items judged per batch under ``--stop-when-decided``: the stopping rule is evaluated after
#: every complete batch of the seeded order (and once before the first), never mid-batch, so
#: the set of judged items does not depend on thread timing.
EARLY_STOP_BATCH: Final = 16
#: Output tokens a judge call is projected at when no ``max_output_tokens`` is set: the dry
#: run's cost estimate only (an allowance, not a bound). A spend cap needs a real ceiling
#: (``max_output_tokens``), since nothing else bounds what one answer costs.
JUDGE_OUTPUT_ALLOWANCE_TOKENS: Final = 2048
#: Safety gap on the [0, 1] scale: a verdict is called certain only when its bound clears the
#: threshold by more than this. It is about 10⁶ times the largest rounding error of the
#: arithmetic behind a bound (a few ulps of numbers ≤ 1), so rounding can never make an early
#: verdict differ from the full run's; the price is judging slightly more than strictly needed.
EARLY_STOP_SLACK: Final = 1e-9
#: A judge whose order-swap disagreement rate on a dimension exceeds this share gets a
#: WARNING line in the report (the winner changed with the presentation order).
JUDGE_SWAP_WARNING: Final = 0.35
#: ``vocencebench judge agree``: items re-judged by default, the seed that picks them (and
#: resamples them for the κ interval), the bootstrap resamples of that interval and its
#: two-sided level (the 2.5th to the 97.5th percentile of the resampled κ).
AGREE_ITEMS: Final = 50
AGREE_SEED: Final = PROJECT_SEED + 2
AGREE_BOOTSTRAP_N: Final = 2000
AGREE_CI: Final = 0.95

#: How far (absolute, on the [0, 1] scale) a published S may lie from the S that its own d
#: and gate give by the rule before ``decide`` and ``report`` refuse it: room for another
#: implementation's rounding (exp, log and the sum in another language), far below any edit
#: that could move a verdict. The same bound applies to the numbers of a recomputed Decision,
#: and the robustness section recomputes no variant from d when a stored S lies further than
#: this from it (the scores were edited).
COMPOSITE_TOLERANCE: Final = 1e-9

# -- scale-out (vocencebench.executor.DaskExecutor, docs/architecture.md)

#: Seconds a Dask run waits while units are pending and the cluster has no worker able to run
#: them (all workers lost, none started yet, the scheduler unreachable) before it stops with
#: an error saying so; finished work is in the cache and the same command resumes. Long
#: enough for a restarted worker or a batch queue's first job; ``no_workers_timeout=None``
#: waits for ever.
DASK_NO_WORKERS_TIMEOUT_S: Final = 300.0
#: Seconds between two looks at the cluster's workers while units are pending.
DASK_WORKER_POLL_S: Final = 1.0
#: Seconds between two warnings while a run waits for workers.
DASK_NO_WORKERS_WARN_S: Final = 30.0

# -- exit statuses of the command line and of ``vb.redteam`` (docs/cli.md, "Exit status")

#: Success: for ``run`` and ``demo`` a tie too (a verdict is a result, not an error); for the
#: red team, no row VULNERABLE and no duel incomplete.
EXIT_OK: Final = 0
#: A check found problems: ``corpus check`` violations, a damaged, foreign or tampered cache
#: (``cache check``), a leaderboard cell that does not reproduce (``leaderboard --verify``), a
#: VULNERABLE red-team row.
EXIT_CHECK_FAILED: Final = 1
#: A usage or user error the user can fix (bad file, bad option, failed component), or a
#: command group called without its subcommand.
EXIT_USAGE: Final = 2
#: INCOMPLETE: an instrument failed on some items (or its known-answer canaries, before any
#: item), so no winner is named; a red team with a duel that could not be decided.
EXIT_INCOMPLETE: Final = 3
#: Interrupted by Ctrl-C, SIGTERM or SIGHUP (128 + SIGINT).
EXIT_INTERRUPTED: Final = 130
#: Standard output's reader went away before the command had written everything (``... |
#: head -1``): 128 + SIGPIPE, the status a shell reports for a program a closed pipe ends.
EXIT_BROKEN_PIPE: Final = 141
