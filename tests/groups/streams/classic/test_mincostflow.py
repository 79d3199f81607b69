"""Kafka's min-cost flow (``Graph``), with the answers of Kafka's GraphTest: the tests 3.6.2's GraphTest has hold for
both solvers (3.6's and 3.7's, KAFKA-15022), the max-flow ones came with 3.7."""

from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.core.releases import BEFORE_KAFKA_15022, KAFKA_15022
from kassign.groups.streams.classic.mincostflow import Edge, FlowGraph, FlowGraphError

BOTH_SOLVERS = pytest.mark.parametrize("flow", [BEFORE_KAFKA_15022, KAFKA_15022])


def _graph() -> FlowGraph:
    # tasks 0 and 2, clients 1 and 3: flow 0 -> 1 (cost 3) and 2 -> 3 (cost 2), total 5
    g = FlowGraph()
    g.add_edge(0, 1, 1, 3, 1)
    g.add_edge(0, 3, 1, 1, 0)
    g.add_edge(2, 1, 1, 1, 0)
    g.add_edge(2, 3, 1, 2, 1)
    g.add_edge(-1, 0, 1, 0, 1)
    g.add_edge(-1, 2, 1, 0, 1)
    g.add_edge(1, 99, 1, 0, 1)
    g.add_edge(3, 99, 1, 0, 1)
    g.source, g.sink = -1, 99
    return g


def test_basic():
    g = _graph()
    assert g.nodes() == [-1, 0, 1, 2, 3, 99]
    assert g.edges(0) == {1: Edge(1, 1, 3, 0, 1), 3: Edge(3, 1, 1, 1, 0)}
    assert g.edges(2) == {1: Edge(1, 1, 1, 1, 0), 3: Edge(3, 1, 2, 0, 1)}
    assert g.edges(-1) == {0: Edge(0, 1, 0, 0, 1), 2: Edge(2, 1, 0, 0, 1)}
    assert g.edges(99) == {}


@BOTH_SOLVERS
def test_min_cost_flow(flow):
    g = _graph()
    assert g.total_cost() == 5
    g.solve_min_cost_flow(flow)
    assert g.total_cost() == 2
    assert g.edges(0) == {1: Edge(1, 1, 3, 1, 0), 3: Edge(3, 1, 1, 0, 1)}
    assert g.edges(2) == {1: Edge(1, 1, 1, 0, 1), 3: Edge(3, 1, 2, 1, 0)}


@pytest.mark.parametrize("args, message", [
    ((0, 1, -1, 0, 0), "Edge capacity cannot be negative"),
    ((0, 1, 1, 0, 2), "Edge flow 2 cannot exceed capacity 1"),
    ((1, 0, 1, 0, 0), "There is already an edge from 0 to 1. Can not add an edge from 1 to 0 since there will "
                      "create a cycle between two nodes"),
])
def test_invalid_operation(args, message):
    g = FlowGraph()
    g.add_edge(0, 1, 1, 1, 1)
    with pytest.raises(FlowGraphError) as err:
        g.add_edge(*args)
    assert str(err.value) == message


@pytest.mark.parametrize("edges, source, sink, message", [
    ([(0, 1, 1, 1, 0), (1, 2, 1, 1, 0)], 1, 2, "Source node 1 shouldn't have input 0"),
    ([(0, 1, 1, 1, 0), (1, 2, 1, 1, 0)], 0, 1, "Sink node 1 shouldn't have output"),
    ([(0, 1, 1, 1, 1), (0, 2, 2, 1, 2), (1, 3, 1, 1, 1), (2, 3, 2, 1, 0)], 0, 3,
     "Input flow for node 2 is 2 which doesn't match output flow 0"),
    ([(0, 1, 1, 1, 1), (0, 2, 2, 1, 2), (1, 3, 1, 1, 1), (2, 3, 2, 1, 2)], None, 3,
     "Output flow for source null is null which doesn't match input flow 3 for sink 3"),
    ([(0, 1, 1, 1, 1), (2, 3, 2, 1, 2)], 0, 1, "Input flow for node 3 is 2 which doesn't match output flow null"),
    ([(0, 1, 1, 1, 1), (2, 3, 2, 1, 2)], 0, 3, "Input flow for node 1 is 1 which doesn't match output flow null"),
])
def test_invalid_flows(edges, source, sink, message, flow=KAFKA_15022):
    g = FlowGraph()
    for e in edges:
        g.add_edge(*e)
    g.source, g.sink = source, sink
    with pytest.raises(FlowGraphError) as err:
        g.solve_min_cost_flow(flow)
    assert str(err.value) == message


def test_null_node():
    with pytest.raises(FlowGraphError):
        FlowGraph().add_edge(None, 1, 1, 1, 1)


@BOTH_SOLVERS
def test_just_source_and_sink(flow):
    g = FlowGraph()
    g.add_edge(0, 1, 1, 1, 1)
    g.source, g.sink = 0, 1
    g.solve_min_cost_flow(flow)
    assert g.total_cost() == 1


@BOTH_SOLVERS
def test_node_found_outside_the_negative_cycle(flow):
    # Bellman-Ford's last relaxed node is 2, outside the cycle 1 -> 4 -> 0 -> 3 -> 1
    g = FlowGraph()
    for e in [(-1, 0, 1, 0, 1), (-1, 1, 1, 0, 1), (0, 2, 1, 1, 0), (0, 3, 1, 1, 0), (0, 4, 1, 10, 1),
              (1, 2, 1, 1, 0), (1, 3, 1, 10, 1), (1, 4, 1, 1, 0), (2, 99, 0, 0, 0), (3, 99, 1, 0, 1),
              (4, 99, 1, 0, 1)]:
        g.add_edge(*e)
    g.source, g.sink = -1, 99
    assert g.total_cost() == 20
    g.solve_min_cost_flow(flow)
    assert g.total_cost() == 2
    assert g.edges(0) == {2: Edge(2, 1, 1, 1, 0), 3: Edge(3, 1, 1, 0, 1), 4: Edge(4, 1, 10, 1, 0)}
    assert g.edges(1) == {2: Edge(2, 1, 1, 1, 0), 3: Edge(3, 1, 10, 1, 0), 4: Edge(4, 1, 1, 0, 1)}
    assert g.edges(2) == {99: Edge(99, 0, 0, 0, 0)}


@BOTH_SOLVERS
def test_deterministic_whatever_the_order_edges_are_added(flow):
    edges = [(0, 1, 1, 2, 1), (0, 2, 1, 1, 0), (0, 3, 1, 1, 0), (0, 4, 1, 1, 0),
             (1, 5, 1, 1, 1), (2, 5, 1, 1, 0), (3, 5, 1, 1, 0), (4, 5, 1, 1, 0)]
    rng = random.Random(7)
    for _ in range(10):
        rng.shuffle(edges)
        g = FlowGraph()
        for e in edges:
            g.add_edge(*e)
        g.source, g.sink = 0, 5
        assert g.total_cost() == 3
        g.solve_min_cost_flow(flow)
        assert g.total_cost() == 2
        assert g.edges(0) == {1: Edge(1, 1, 2, 1, 0), 2: Edge(2, 1, 1, 0, 1), 3: Edge(3, 1, 1, 1, 0),
                              4: Edge(4, 1, 1, 1, 0)}
        assert g.edges(2) == {5: Edge(5, 1, 1, 0, 1)}


def test_max_flow_only_source_and_sink():
    g = FlowGraph()
    g.add_edge(0, 1, 100, 0, 0)
    g.source, g.sink = 0, 1
    assert g.calculate_max_flow() == 100
    assert g.edges(0)[1] == Edge(1, 100, 0, 0, 100)


@pytest.mark.parametrize("caps, expected", [
    ((10, 5, 2), [2, 2, 2]),  # bound by the edges into the sink
    (None, [1, 2, 3]),        # bound by the edges out of the source
])
def test_max_flow_bounds(caps, expected):
    g = FlowGraph()
    for i in range(3):
        first, middle, last = caps if caps else (i + 1, 5, 10)
        g.add_edge(0, 1 + i, first, 0, 0)
        g.add_edge(1 + i, 4 + i, middle, 0, 0)
        g.add_edge(4 + i, 7, last, 0, 0)
    g.source, g.sink = 0, 7
    assert g.calculate_max_flow() == 6
    assert [g.edges(0)[1 + i].flow for i in range(3)] == expected
    assert [g.edges(4 + i)[7].flow for i in range(3)] == expected


@BOTH_SOLVERS
@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6), st.integers(1, 4), st.data())
def test_min_cost_matches_networkx(flow, tasks, clients, data):
    """A task-to-client assignment graph: the cost found is the true minimum for that flow."""
    costs = data.draw(st.lists(st.integers(-5, 20), min_size=tasks * clients, max_size=tasks * clients))
    owner = data.draw(st.lists(st.integers(0, clients - 1), min_size=tasks, max_size=tasks))
    g = FlowGraph()
    reference = nx.DiGraph()
    sink = tasks + clients
    for t, c in itertools.product(range(tasks), range(clients)):
        g.add_edge(t, tasks + c, 1, costs[t * clients + c], int(owner[t] == c))
        reference.add_edge(t, tasks + c, capacity=1, weight=costs[t * clients + c])
    for t in range(tasks):
        g.add_edge(-1, t, 1, 0, 1)
        reference.add_edge(-1, t, capacity=1, weight=0)
    for c in range(clients):
        load = owner.count(c)
        g.add_edge(tasks + c, sink, load, 0, load)
        reference.add_edge(tasks + c, sink, capacity=load, weight=0)
    g.source, g.sink = -1, sink
    before = g.total_cost()
    g.solve_min_cost_flow(flow)
    reference.nodes[-1]["demand"] = -tasks
    reference.nodes[sink]["demand"] = tasks
    assert g.total_cost() == nx.min_cost_flow_cost(reference)
    assert g.total_cost() <= before
    for c in range(clients):
        assert sum(g.edges(t)[tasks + c].flow for t in range(tasks)) == owner.count(c)


def _assignment_graph(costs: list[list[int]], owner: list[int]) -> FlowGraph:
    """Tasks 0..T-1, clients T..T+C-1, source -1, sink T+C, as rack-aware assignment builds them."""
    tasks, clients = len(costs), len(costs[0])
    g = FlowGraph()
    for t in range(tasks):
        for c in range(clients):
            g.add_edge(t, tasks + c, 1, costs[t][c], int(owner[t] == c))
        g.add_edge(-1, t, 1, 0, 1)
    for c in range(clients):
        g.add_edge(tasks + c, tasks + clients, owner.count(c), 0, owner.count(c))
    g.source, g.sink = -1, tasks + clients
    return g


@pytest.mark.parametrize("flow, clients", [(BEFORE_KAFKA_15022, [0, 1, 1, 0]), (KAFKA_15022, [1, 1, 0, 0])])
def test_3_6_and_3_7_break_a_tie_differently(flow, clients):
    # four tasks, two clients holding two each; client 1 is cheap for every task but 3 (cost 1), client 0 costs 10
    # or 11. Two answers cost 20; 3.6's search (every node a source, distances from 2^31 - 1) keeps task 0 on
    # client 0 and moves task 2 over, 3.7's (one dummy source) moves task 0 and task 3 instead. Kafka 3.6.2's and
    # 3.7.2's own Graph give these flows.
    g = _assignment_graph([[10, 0], [11, 0], [10, 0], [10, 1]], [0, 0, 1, 1])
    g.solve_min_cost_flow(flow)
    assert g.total_cost() == 20
    assert [next(c for c in range(2) if g.edges(t)[4 + c].flow) for t in range(4)] == clients


def test_3_6_can_run_out_of_parents():
    # negative costs (a rack-aware cost may be any Java int): 3.6's search takes a node in the last pass before it
    # gets its new parent, and its walk back finds no cycle; Kafka 3.6.2 fails with a NullPointerException there,
    # 3.7 solves it
    costs = [[11, 0, -3, 1], [11, 1, 1, -3]]
    with pytest.raises(FlowGraphError, match="NullPointerException"):
        _assignment_graph(costs, [1, 2]).solve_min_cost_flow(BEFORE_KAFKA_15022)
    g = _assignment_graph(costs, [1, 2])
    g.solve_min_cost_flow(KAFKA_15022)
    assert g.total_cost() == -2  # task 0 to the client at -3, task 1 to the one at 1
