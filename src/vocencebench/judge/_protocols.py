"""What a run asks of a judge: the protocols the pipeline checks once, before any work.

:class:`~vocencebench.judge.Judge` is the one shipped implementation (mypy checks that it
conforms); any other object with these members can judge a run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..audio import Clip
from ..schema import Verdict

if TYPE_CHECKING:
    from ._judge import Judge

__all__ = ["CachingJudge", "PairJudge"]


@runtime_checkable
class PairJudge(Protocol):
    """What a run asks of its judge (:class:`vocencebench.judge.Judge` is the one shipped):
    a :class:`~vocencebench.schema.Verdict` on one dimension (:meth:`compare`) or on several
    in one call (:meth:`compare_all`) for a pair of clips; ``model`` and ``prompt_version``
    name it in the run's metadata."""

    @property
    def model(self) -> str: ...

    @property
    def prompt_version(self) -> str: ...

    def compare(self, *, text: str, instruction: str, audio_a: Clip, audio_b: Clip,
                dimension: str, consistent: bool, votes: int, category: str | None
                ) -> Verdict: ...

    def compare_all(self, *, text: str, instruction: str, audio_a: Clip, audio_b: Clip,
                    dimensions: Sequence[str], all_at_once: bool, consistent: bool,
                    votes: int, category: str | None) -> Mapping[str, Verdict]: ...


@runtime_checkable
class CachingJudge(Protocol):
    """A judge that can keep its verdicts in the run's cache: :meth:`with_cache` returns a
    judge like this one that uses ``cache``, leaving this one as it was."""

    def with_cache(self, cache: Any) -> PairJudge: ...


if TYPE_CHECKING:  # the shipped judge satisfies the protocols (mypy checks this)

    def _conforms(judge: Judge) -> tuple[PairJudge, CachingJudge]:
        return judge, judge
