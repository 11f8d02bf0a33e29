"""``design.Sparse``'s pair terms (issue 29: a two-player pair held as one value, not four
entries) are the matrix their four entries make, to the last bit: what the fit reads of it
(dense, diagonal, product, compact form) is what the entries spelled out give."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from bot_arena.arena.ratings.design import Sparse

K = 6

pair = st.tuples(st.integers(0, K - 2), st.integers(1, K - 1)).filter(lambda p: p[0] < p[1])
value = st.floats(-3.0, 3.0, allow_nan=False, allow_subnormal=False)
entry = st.tuples(st.integers(0, K - 1), st.integers(0, K - 1), value)


def spelled_out(matrix: Sparse) -> Sparse:
    """The same matrix as plain entries: the pairs' four each, then the others."""
    return Sparse(matrix.k, *matrix.entries())


@given(
    pairs=st.lists(st.tuples(pair, value), max_size=12, unique_by=lambda p: p[0]),
    others=st.lists(entry, max_size=12),
    vector=st.lists(value, min_size=K, max_size=K),
)
def test_pair_terms_are_their_four_entries(
    pairs: list[tuple[tuple[int, int], float]],
    others: list[tuple[int, int, float]],
    vector: list[float],
) -> None:
    i = np.asarray([p[0][0] for p in pairs], dtype=np.intp)
    j = np.asarray([p[0][1] for p in pairs], dtype=np.intp)
    v = np.asarray([p[1] for p in pairs], dtype=np.float64)
    rows = np.asarray([e[0] for e in others], dtype=np.intp)
    cols = np.asarray([e[1] for e in others], dtype=np.intp)
    vals = np.asarray([e[2] for e in others], dtype=np.float64)
    held = Sparse(K, rows, cols, vals, i, j, v)
    plain = spelled_out(held)
    assert len(plain.rows) == 4 * len(pairs) + len(others)
    # the same sums in the same order: equal bits, not merely close
    assert held.dense().tobytes() == plain.dense().tobytes()
    assert held.diagonal().tobytes() == plain.diagonal().tobytes()
    compact, compact_plain = held.compact(), plain.compact()
    for field in ("rows", "cols", "vals"):
        assert getattr(compact, field).tolist() == getattr(compact_plain, field).tolist()
    x = np.asarray(vector)
    np.testing.assert_allclose(held.matvec(x), plain.matvec(x), rtol=1e-12, atol=1e-12)


def test_a_pair_alone_is_its_two_by_two_block() -> None:
    held = Sparse(
        3,
        np.zeros(0, np.intp),
        np.zeros(0, np.intp),
        np.zeros(0),
        *(np.asarray([0]), np.asarray([2]), np.asarray([1.5])),
    )
    expected = [[1.5, 0.0, -1.5], [0.0, 0.0, 0.0], [-1.5, 0.0, 1.5]]
    assert held.dense().tolist() == expected
    assert held.diagonal().tolist() == [1.5, 0.0, 1.5]
    assert held.matvec(np.asarray([1.0, 5.0, 3.0])).tolist() == [-3.0, 0.0, 3.0]


def test_other_entries_add_after_the_pairs_in_their_order() -> None:
    """(1 + 2^-53) + 2^-53 is 1 but 1 + (2^-53 + 2^-53) is not: the cells are summed as the
    entries come, the pairs first, like ``dense`` of the entries spelled out."""
    tiny = 2.0**-53
    held = Sparse(
        2,
        np.asarray([0, 0, 0, 1], dtype=np.intp),
        np.asarray([0, 0, 1, 0], dtype=np.intp),
        np.asarray([tiny, tiny, tiny, tiny]),
        np.asarray([0], dtype=np.intp),
        np.asarray([1], dtype=np.intp),
        np.asarray([1.0]),
    )
    assert held.dense().tolist() == [[1.0, tiny - 1.0], [tiny - 1.0, 1.0]]
    assert held.diagonal().tolist() == [1.0, 1.0]
    assert held.dense().tobytes() == spelled_out(held).dense().tobytes()


def _pooled_reference(pool: list[int], info: Sparse, meat: Sparse) -> tuple[np.ndarray, np.ndarray]:
    """``ml._one_pool`` as it was written first: each matrix's cells of the pool copied out."""
    m, cells = len(pool), np.ix_(pool, pool)
    model = np.linalg.inv(info.dense()[cells] + 1.0 / m) - 1.0 / m
    return model, model @ meat.dense()[cells] @ model


@given(
    pairs=st.lists(st.tuples(pair, st.floats(0.1, 3.0)), max_size=12),
    order=st.permutations(list(range(K))),
)  # fmt: skip
def test_one_pool_reads_the_matrices_in_place_only_in_their_own_order(
    pairs: list[tuple[tuple[int, int], float]], order: list[int]
) -> None:
    """A field of one pool in the matrices' own order is read without copying its cells
    (issue 29: two 1,000 x 1,000 copies a fit); in any other order they are copied: the
    covariances are the bits the copies give, either way."""
    from bot_arena.arena.ratings.ml import _one_pool

    chain = [((a, a + 1), 1.0 + a / 7) for a in range(K - 1)]  # every bot linked: one pool
    i = np.asarray([p[0][0] for p in chain + pairs], dtype=np.intp)
    j = np.asarray([p[0][1] for p in chain + pairs], dtype=np.intp)
    v = np.asarray([p[1] for p in chain + pairs], dtype=np.float64)
    empty = np.zeros(0, np.intp)
    info = Sparse(K, empty, empty, np.zeros(0), i, j, v + 1.0)
    meat = Sparse(K, empty, empty, np.zeros(0), i, j, v)
    for pool in (list(range(K)), order):
        found, expected = _one_pool(pool, info, meat), _pooled_reference(pool, info, meat)
        for got, want in zip(found, expected, strict=True):
            assert got.tobytes() == want.tobytes()
