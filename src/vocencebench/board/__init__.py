"""N systems on one corpus, every pair decided by the same exact rule: the leaderboard.

The façade over the package (``docs/leaderboard.md`` is the method and the files):

* :func:`leaderboard` runs N systems (:mod:`.run`) and returns a :class:`Leaderboard`;
* :func:`plan_judge_calls` says beforehand what the judge will be asked and cost
  (:class:`JudgePlan`, :mod:`.plan`);
* :func:`standings_from_scores` and :func:`verify` recompute a published leaderboard from its
  scores (:mod:`.published`);
* :func:`demo_leaderboard` and :func:`demo_systems` are the offline demo (:mod:`.demo`).

The pure statistics are :mod:`.ranking` (tiers, intervals, standings) over :mod:`.cells` (the
compared pairs and their verdicts) and :mod:`.bradley_terry` (the summary, not the verdict);
the files a person reads are written by :mod:`.report`. ``vb.leaderboard`` and
``vb.Leaderboard`` are the names here.
"""

from __future__ import annotations

from .demo import DEMO_ITEMS_WITH_NEURAL, demo_leaderboard, demo_systems
from .plan import JudgePlan, plan_judge_calls
from .published import read_board, standings_from_scores, verify
from .ranking import Standings
from .report import save_leaderboard
from .run import LEADERBOARD_KIND, LEADERBOARD_SCHEMA_VERSION, Leaderboard, leaderboard

__all__ = [
    "DEMO_ITEMS_WITH_NEURAL",
    "LEADERBOARD_KIND",
    "LEADERBOARD_SCHEMA_VERSION",
    "JudgePlan",
    "Leaderboard",
    "Standings",
    "demo_leaderboard",
    "demo_systems",
    "leaderboard",
    "plan_judge_calls",
    "read_board",
    "save_leaderboard",
    "standings_from_scores",
    "verify",
]
