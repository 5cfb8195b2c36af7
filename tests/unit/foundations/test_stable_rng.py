"""The seeded helpers read only the raw PCG64 words (the stream NumPy keeps across releases):
their outputs follow, by hand, from the first three words of seed 3151662 published in
docs/reproducibility.md."""

from __future__ import annotations

import numpy as np

from vocencebench._util.stable_rng import stable_coins, stable_permutation, stable_uniform

SEED = 3151662
WORDS = (5418480517917235104, 1236243945556869554, 12549493898861467571)


def test_the_published_words_are_the_stream() -> None:
    assert [int(x) for x in np.random.PCG64(SEED).random_raw(3)] == list(WORDS)


def test_each_helper_follows_from_the_words_by_hand() -> None:
    assert stable_permutation(np.random.PCG64(SEED), 3) == [1, 0, 2]  # the words' sort order
    assert stable_coins(np.random.PCG64(SEED), 3) == [w >= 2**63 for w in WORDS] \
        == [False, False, True]
    u = stable_uniform(np.random.PCG64(SEED), 3)
    assert u.tolist() == [(w >> 11) * 2.0**-52 - 1.0 for w in WORDS]
    assert all(-1.0 <= x < 1.0 for x in u)


def test_draws_continue_the_stream_in_call_order() -> None:
    bitgen = np.random.PCG64(SEED)
    first, second = stable_permutation(bitgen, 2), stable_coins(bitgen, 1)
    assert first == [1, 0] and second == [True]  # the third word
    assert stable_permutation(np.random.PCG64(SEED), 0) == []
    assert stable_coins(np.random.PCG64(SEED), 0) == []
    perm = stable_permutation(np.random.PCG64(7), 500)
    assert sorted(perm) == list(range(500)) and perm != list(range(500))
