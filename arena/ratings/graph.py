"""Who played whom: connected pools and the strongly connected "scored against" structure.

Ratings are only comparable inside a *pool*: bots linked by games, directly or through others.
Inside a pool the maximum-likelihood ratings are finite exactly when the directed graph
"i scored at least a draw (or a tied rank) against j" is strongly connected (Zermelo 1929;
Hunter 2004, assumption 1). When it is not, the rating code adds a weak prior.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def pools(k: int, edges_a: NDArray[np.intp], edges_b: NDArray[np.intp]) -> list[list[int]]:
    """Connected components of the undirected graph on ``k`` nodes, each sorted, in order of
    their smallest node."""
    both_a, both_b = np.concatenate([edges_a, edges_b]), np.concatenate([edges_b, edges_a])
    if _reaches_all(k, both_a, both_b):  # the usual case, found without a step per edge
        return [list(range(k))]
    return _union_find(k, edges_a, edges_b)


def _union_find(k: int, edges_a: NDArray[np.intp], edges_b: NDArray[np.intp]) -> list[list[int]]:
    """``pools`` by union-find over the distinct links (any graph)."""
    parent = list(range(k))
    if len(edges_a):  # a million games have at most k^2 distinct links
        links = np.unique(np.minimum(edges_a, edges_b) * k + np.maximum(edges_a, edges_b))
        edges_a, edges_b = links // k, links % k

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in zip(edges_a.tolist(), edges_b.tolist(), strict=True):
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, list[int]] = {}
    for x in range(k):
        groups.setdefault(find(x), []).append(x)
    return sorted(groups.values(), key=lambda g: g[0])


def strong_components(k: int, src: NDArray[np.intp], dst: NDArray[np.intp]) -> list[list[int]]:
    """Strongly connected components of the directed graph on ``k`` nodes with edges
    ``src[e] -> dst[e]``, Kosaraju's algorithm with explicit stacks (no recursion limit).
    Adjacency lists come from sorting the edges: the cost follows the edges, not k^2.
    A graph that is one component (every node reached from node 0 both ways, the usual case)
    is found by numpy passes over the edges, without a Python step per edge."""
    if _reaches_all(k, src, dst) and _reaches_all(k, dst, src):
        return [list(range(k))]
    return _kosaraju(k, src, dst)


def _kosaraju(k: int, src: NDArray[np.intp], dst: NDArray[np.intp]) -> list[list[int]]:
    """``strong_components`` of any graph, by Kosaraju's algorithm."""
    succ = _lists(k, src, dst)
    pred = _lists(k, dst, src)
    seen = [False] * k
    order: list[int] = []
    for root in range(k):
        if seen[root]:
            continue
        seen[root] = True
        stack: list[tuple[int, int]] = [(root, 0)]
        while stack:
            node, pos = stack[-1]
            if pos < len(succ[node]):
                stack[-1] = (node, pos + 1)
                nxt = succ[node][pos]
                if not seen[nxt]:
                    seen[nxt] = True
                    stack.append((nxt, 0))
            else:
                stack.pop()
                order.append(node)
    comp = [-1] * k
    out: list[list[int]] = []
    for root in reversed(order):
        if comp[root] >= 0:
            continue
        members = [root]
        comp[root] = len(out)
        todo = [root]
        while todo:
            node = todo.pop()
            for prev in pred[node]:
                if comp[prev] < 0:
                    comp[prev] = len(out)
                    members.append(prev)
                    todo.append(prev)
        out.append(sorted(members))
    return out


def _reaches_all(k: int, src: NDArray[np.intp], dst: NDArray[np.intp]) -> bool:
    """Whether every node is reached from node 0 along edges ``src[e] -> dst[e]`` (False for
    no nodes): breadth first, one vectorised pass over the edges a level."""
    if k == 0:
        return False
    seen = np.zeros(k, dtype=bool)
    seen[0] = True
    while True:
        new = dst[seen[src] & ~seen[dst]]
        if not len(new):
            return bool(seen.all())
        seen[new] = True


def _lists(k: int, src: NDArray[np.intp], dst: NDArray[np.intp]) -> list[list[int]]:
    """Each node's distinct successors, in increasing order."""
    keys = np.unique(src.astype(np.int64) * k + dst)
    heads, tails = (keys // k).tolist(), (keys % k).tolist()
    out: list[list[int]] = [[] for _ in range(k)]
    for a, b in zip(heads, tails, strict=True):
        out[a].append(b)
    return out
