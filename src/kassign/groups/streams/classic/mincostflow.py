"""Kafka Streams' own min-cost flow (``Graph``, KIP-925), step for step.

Rack-aware task assignment asks a flow network which client each task should go to. Many
answers cost the same, so *which* one comes out depends on how the solver walks the graph;
this module walks it the way Kafka's ``Graph`` does, so that equal-cost ties break as in Kafka.

The rule:

* A graph has integer nodes and at most one edge per ordered pair of nodes (an edge ``u -> v``
  is refused when ``v -> u`` exists). Each edge has a capacity, a cost and a flow; nodes are
  visited in ascending order, a node's edges in ascending order of their destination.
* :meth:`FlowGraph.solve_min_cost_flow` starts from the flow the edges carry (it must be a
  valid flow: what enters a node leaves it, except at the source and the sink) and cancels
  negative cycles: in the residual graph (each edge ``u -> v`` with room ``capacity - flow``
  at its cost, plus ``v -> u`` with room ``flow`` at minus its cost) a dummy node, placed
  before every other node, reaches every node at cost 0; Bellman-Ford from it runs exactly
  ``nodes + 1`` passes over all edges in the order above, and the first node whose distance
  still falls in the last pass leads, through its parents, to a negative cycle. The cycle
  takes the least room along it, and the search starts again until none is found. A node
  relaxes its edges only once some path reaches it. This is Kafka 3.7.0 and later
  (KAFKA-15022's #14696, "detect negative cycle from one source", and #14198, "only relax
  edge when path exists").
* Kafka 3.6 searches differently (``flow_rule`` ``BEFORE_KAFKA_15022``): no dummy node; each
  node in ascending order is the source of a Bellman-Ford search of ``nodes`` passes in which
  every other node starts at ``2^31 - 1`` (so a negative edge relaxes even from a node no
  path reaches), and the node whose distance would still fall in the last pass is taken
  before it gets its new parent. Each cycle found is cancelled and the search goes on from
  the next node; rounds over all nodes repeat while one found a cycle. Ties between
  equal-cost answers can then break otherwise than in 3.7.
* :meth:`FlowGraph.calculate_max_flow` is Ford-Fulkerson with breadth-first search in the same
  edge order, stopping the search as soon as it reaches the sink.

Example (Kafka's GraphTest): tasks 0 and 2, clients 1 and 3, source -1, sink 99. Flow goes
0 -> 1 (cost 3) and 2 -> 3 (cost 2): total 5. The residual cycle 0 -> 3 -> 2 -> 1 -> 0 costs
1 - 2 + 1 - 3 = -3, so cancelling it sends 0 -> 3 and 2 -> 1 instead: total 2 (in 3.6 and in
3.7 alike: here only one cheapest answer exists).

Hot path: the solver runs in numba over int64 arrays (one row per residual edge, in Kafka's
visiting order). kassign ends a Bellman-Ford search early when a whole pass changes nothing:
later passes would change nothing either, so the answer is the same as Kafka's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from kassign.core.errors import KassignError
from kassign.core.releases import BEFORE_KAFKA_15022, KAFKA_15022

_NO_CYCLE = -1
_BROKEN_CYCLE = -2


class FlowGraphError(KassignError):
    """An edge or a flow that Kafka's ``Graph`` refuses (its IllegalArgumentException or
    IllegalStateException); the message is Kafka's."""


@dataclass
class Edge:
    """One edge: ``residual`` is the room left (``capacity - flow`` for an edge of the graph)."""

    destination: int
    capacity: int
    cost: int
    residual: int
    flow: int
    forward: bool = True


class FlowGraph:
    """A flow network on integer nodes, solved as Kafka's ``Graph<Integer>`` solves it."""

    def __init__(self) -> None:
        self._adj: dict[int, dict[int, Edge]] = {}
        self._nodes: set[int] = set()
        self.source: int | None = None
        self.sink: int | None = None

    # -- building ---------------------------------------------------------------------------

    def add_edge(self, u: int, v: int, capacity: int, cost: int, flow: int) -> None:
        if u is None or v is None:
            raise FlowGraphError("a node of the graph cannot be null")
        if capacity < 0:
            raise FlowGraphError("Edge capacity cannot be negative")
        if flow > capacity:
            raise FlowGraphError(f"Edge flow {flow} cannot exceed capacity {capacity}")
        if u in self._adj.get(v, {}):
            raise FlowGraphError(f"There is already an edge from {v} to {u}. Can not add an edge from {u} to {v} "
                                 "since there will create a cycle between two nodes")
        self._adj.setdefault(u, {})[v] = Edge(v, capacity, cost, capacity - flow, flow)
        self._nodes.add(u)
        self._nodes.add(v)

    def nodes(self) -> list[int]:
        return sorted(self._nodes)

    def edges(self, node: int) -> dict[int, Edge]:
        """The node's edges by destination, in ascending order."""
        return dict(sorted(self._adj.get(node, {}).items()))

    def total_cost(self) -> int:
        return sum(e.cost * e.flow for edges in self._adj.values() for e in edges.values())

    def flow(self) -> int:
        return sum(e.flow for e in self._adj.get(self.source, {}).values())

    # -- solving ----------------------------------------------------------------------------

    def solve_min_cost_flow(self, flow_rule: str = KAFKA_15022) -> None:
        """Cancel negative cycles until none is left (Kafka's ``solveMinCostFlow``), as the release whose
        ``KSTREAMS_RACK_FLOW`` rule is ``flow_rule`` does it."""
        self._validate_flow()
        before = flow_rule == BEFORE_KAFKA_15022
        residual = _Residual(self, with_dummy=not before)
        status = _cancel_negative_cycles(residual.n_nodes, residual.src, residual.dst, residual.cost,
                                         residual.room, residual.flow, residual.forward, residual.counter, before)
        if status == _BROKEN_CYCLE:
            # Kafka walks the parents of the node found into a null parent and fails on it (3.6's search can)
            raise FlowGraphError(f"Kafka {'3.6' if before else '3.7 and later'}'s min-cost flow fails on this graph "
                                 "(rack-aware assignment): its negative cycle search runs out of parent nodes, a "
                                 "NullPointerException in Kafka")
        residual.write_back(self)

    def calculate_max_flow(self) -> int:
        """Ford-Fulkerson with breadth-first search (Kafka's ``calculateMaxFlow``); the edges
        keep the flow found, and the flow out of the source is returned."""
        residual = _Residual(self, with_dummy=False)
        _ford_fulkerson(residual.offsets, residual.src, residual.dst, residual.room, residual.flow,
                        residual.forward, residual.counter, residual.index(self.source), residual.index(self.sink))
        residual.write_back(self)
        return self.flow()

    def _validate_flow(self) -> None:
        in_flow: dict[int, int] = {}
        out_flow: dict[int, int] = {}
        for u in sorted(self._adj):
            if u == self.sink:
                raise FlowGraphError(f"Sink node {self.sink} shouldn't have output")
            for v, edge in sorted(self._adj[u].items()):
                if v == self.source:
                    raise FlowGraphError(f"Source node {self.source} shouldn't have input {u}")
                out_flow[u] = out_flow.get(u, 0) + edge.flow
                in_flow[v] = in_flow.get(v, 0) + edge.flow
        for node, flow in in_flow.items():
            if node in (self.source, self.sink):
                continue
            if out_flow.get(node) != flow:
                raise FlowGraphError(f"Input flow for node {node} is {flow} which doesn't match output flow "
                                     f"{_java(out_flow.get(node))}")
        if out_flow.get(self.source) != in_flow.get(self.sink):
            raise FlowGraphError(f"Output flow for source {_java(self.source)} is {_java(out_flow.get(self.source))} "
                                 f"which doesn't match input flow {_java(in_flow.get(self.sink))} for sink "
                                 f"{_java(self.sink)}")


def _java(value: int | None) -> str:
    return "null" if value is None else str(value)


class _Residual:
    """The residual graph as arrays: edges sorted by (node, destination), nodes by key (a dummy
    source first when asked for), each edge knowing its counter edge."""

    def __init__(self, graph: FlowGraph, with_dummy: bool) -> None:
        keys = sorted(graph._nodes)
        first = 1 if with_dummy else 0
        self._index = {k: i + first for i, k in enumerate(keys)}
        self.n_nodes = len(keys) + first
        rows: list[tuple[int, int, int, int, int, bool, int]] = []  # src, dst, cost, room, flow, forward, pair id
        self._pairs: list[tuple[int, int]] = []
        for u in sorted(graph._adj):
            for v, e in sorted(graph._adj[u].items()):
                pair = len(self._pairs)
                self._pairs.append((u, v))
                iu, iv = self._index[u], self._index[v]
                rows.append((iu, iv, e.cost, e.capacity - e.flow, e.flow, True, pair))
                rows.append((iv, iu, -e.cost, e.flow, 0, False, pair))
        if with_dummy:
            rows.extend((0, i, 0, 1, 0, True, -1) for i in range(first, self.n_nodes))
        rows.sort(key=lambda r: (r[0], r[1]))
        n = len(rows)
        self.src = np.fromiter((r[0] for r in rows), np.int64, n)
        self.dst = np.fromiter((r[1] for r in rows), np.int64, n)
        self.cost = np.fromiter((r[2] for r in rows), np.int64, n)
        self.room = np.fromiter((r[3] for r in rows), np.int64, n)
        self.flow = np.fromiter((r[4] for r in rows), np.int64, n)
        self.forward = np.fromiter((r[5] for r in rows), np.bool_, n)
        self.counter = np.full(n, -1, np.int64)
        self._forward_row = [0] * len(self._pairs)
        backward_row = [0] * len(self._pairs)
        for i, r in enumerate(rows):
            if r[6] >= 0:
                (self._forward_row if r[5] else backward_row)[r[6]] = i
        for f, b in zip(self._forward_row, backward_row):
            self.counter[f], self.counter[b] = b, f
        self.offsets = np.searchsorted(self.src, np.arange(self.n_nodes + 1)).astype(np.int64)

    def index(self, key: int | None) -> int:
        if key not in self._index:
            raise FlowGraphError(f"node {_java(key)} is not in the graph")
        return self._index[key]

    def write_back(self, graph: FlowGraph) -> None:
        for pair, (u, v) in enumerate(self._pairs):
            row = self._forward_row[pair]
            edge = graph._adj[u][v]
            edge.flow = int(self.flow[row])
            edge.residual = int(self.room[row])


@njit(cache=True)
def _push(e: int, amount: int, room: np.ndarray, flow: np.ndarray, forward: np.ndarray, counter: np.ndarray) -> None:
    # Kafka's update: the edge loses room (and gains flow if it is an edge of the graph); its
    # counter edge gains room (and, if that one is the graph's edge, gives back flow).
    c = counter[e]
    room[e] -= amount
    if forward[e]:
        flow[e] += amount
    room[c] += amount
    if forward[c] and flow[c] >= amount:
        flow[c] -= amount


@njit(cache=True)
def _find_negative_cycle(source, before_15022, src, dst, cost, room, dist, known, parent_node, parent_edge) -> int:
    """Bellman-Ford from ``source``, one pass per node: the node whose distance still falls in the last pass,
    else ``_NO_CYCLE``. ``before_15022``: every node starts at ``Integer.MAX_VALUE`` (so an edge relaxes even
    from a node no path reaches) and the node found in the last pass keeps its parent from an earlier pass;
    otherwise only a node already reached relaxes its edges, and the node found takes its new parent first."""
    n_nodes = dist.shape[0]
    n_edges = src.shape[0]
    parent_node[:] = -1
    parent_edge[:] = -1
    if before_15022:
        dist[:] = 2**31 - 1
        known[:] = True
    else:
        known[:] = False
    known[source] = True
    dist[source] = 0
    last = n_nodes - 1
    for i in range(n_nodes):
        changed = False
        for e in range(n_edges):
            if room[e] == 0:
                continue
            s = src[e]
            if not known[s]:
                continue
            d = dst[e]
            candidate = dist[s] + cost[e]
            if not known[d] or dist[d] > candidate:
                if before_15022 and i == last:
                    return d
                dist[d] = candidate
                known[d] = True
                parent_node[d] = s
                parent_edge[d] = e
                changed = True
                if i == last:
                    return d
        if not changed:
            return _NO_CYCLE  # a pass that changes nothing: no later pass would either
    return _NO_CYCLE


@njit(cache=True)
def _cancel_cycle(found, room, flow, forward, counter, parent_node, parent_edge, visited) -> bool:
    """Walk the parents from ``found`` into its cycle and push the cycle's least room round it; False when the
    walk runs out of parents first (Kafka would fail on a null node)."""
    visited[:] = False
    node = found
    while not visited[node]:
        visited[node] = True
        node = parent_node[node]
        if node < 0:
            return False
    in_cycle = node
    amount = room[parent_edge[in_cycle]]
    cur = parent_node[in_cycle]
    while cur != in_cycle:
        amount = min(amount, room[parent_edge[cur]])
        cur = parent_node[cur]
    _push(parent_edge[in_cycle], amount, room, flow, forward, counter)
    cur = parent_node[in_cycle]
    while cur != in_cycle:
        _push(parent_edge[cur], amount, room, flow, forward, counter)
        cur = parent_node[cur]
    return True


@njit(cache=True)
def _cancel_negative_cycles(n_nodes, src, dst, cost, room, flow, forward, counter, before_15022) -> int:
    """Kafka 3.7 and later: search from the dummy node 0 until no cycle is left. Kafka 3.6: search from every
    node in turn, cancelling each cycle found and going on with the next node, and start over while a round
    over the nodes found any."""
    dist = np.zeros(n_nodes, np.int64)
    known = np.zeros(n_nodes, np.bool_)
    parent_node = np.full(n_nodes, -1, np.int64)
    parent_edge = np.full(n_nodes, -1, np.int64)
    visited = np.zeros(n_nodes, np.bool_)
    while True:
        cancelled = False
        for source in range(n_nodes if before_15022 else 1):
            found = _find_negative_cycle(source, before_15022, src, dst, cost, room, dist, known, parent_node,
                                         parent_edge)
            if found == _NO_CYCLE:
                continue
            if not _cancel_cycle(found, room, flow, forward, counter, parent_node, parent_edge, visited):
                return _BROKEN_CYCLE
            cancelled = True
            if not before_15022:
                break
        if not cancelled:
            return _NO_CYCLE


@njit(cache=True)
def _ford_fulkerson(offsets, src, dst, room, flow, forward, counter, source, sink) -> None:
    n_nodes = offsets.shape[0] - 1
    parent_edge = np.full(n_nodes, -1, np.int64)
    visited = np.zeros(n_nodes, np.bool_)
    queue = np.zeros(n_nodes, np.int64)
    while True:
        visited[:] = False
        parent_edge[:] = -1
        head, tail = 0, 0
        queue[tail] = source
        tail += 1
        visited[source] = True
        reached = False
        while head < tail and not reached:
            node = queue[head]
            head += 1
            for e in range(offsets[node], offsets[node + 1]):
                nxt = dst[e]
                if visited[nxt] or room[e] <= 0:
                    continue
                parent_edge[nxt] = e
                if nxt == sink:
                    reached = True
                    break
                queue[tail] = nxt
                tail += 1
                visited[nxt] = True
        if not reached:
            return
        amount = np.int64(2**31 - 1)  # Integer.MAX_VALUE, as Kafka starts
        node = sink
        while node != source:
            e = parent_edge[node]
            amount = min(amount, room[e])
            node = src[e]
        node = sink
        while node != source:
            e = parent_edge[node]
            _push(e, amount, room, flow, forward, counter)
            node = src[e]
