"""The rating graph's shortcut (issue 29): a graph that is one component, found by numpy
passes, gives exactly what union-find and Kosaraju's algorithm give for it; any other graph
still goes to them."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bot_arena.arena.ratings import graph

graphs = st.integers(1, 7).flatmap(
    lambda k: st.tuples(
        st.just(k), st.lists(st.tuples(st.integers(0, k - 1), st.integers(0, k - 1)), max_size=20)
    )
)


@settings(max_examples=300, deadline=None)
@given(graphs)
def test_components_equal_the_general_algorithms(found: tuple[int, list[tuple[int, int]]]) -> None:
    k, edges = found
    src = np.asarray([a for a, _ in edges], dtype=np.intp)
    dst = np.asarray([b for _, b in edges], dtype=np.intp)
    assert graph.strong_components(k, src, dst) == graph._kosaraju(k, src, dst)
    assert graph.pools(k, src, dst) == graph._union_find(k, src, dst)


def test_one_component_and_two() -> None:
    ring = np.arange(5, dtype=np.intp)
    assert graph.strong_components(5, ring, (ring + 1) % 5) == [[0, 1, 2, 3, 4]]
    assert graph.pools(5, ring[:4], ring[1:]) == [[0, 1, 2, 3, 4]]
    # a chain is connected but not strongly: each node its own component
    assert graph.strong_components(3, ring[:2], ring[1:3]) == [[0], [1], [2]]
    assert graph.pools(4, ring[:2], ring[1:3]) == [[0, 1, 2], [3]]
    assert graph.strong_components(0, ring[:0], ring[:0]) == []
    assert graph.pools(0, ring[:0], ring[:0]) == []
