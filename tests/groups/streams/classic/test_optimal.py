"""kassign's ``optimal`` Kafka Streams task assignor against an exact solver.

The solver here is brute force over small scenarios, sharing no code with the assignor (which
solves min-cost flows): it reads the scenario document itself, enumerates every assignment of
each part (A: stateful actives; B: standbys around A's actives; C: stateless actives around A's)
and scores each by the objectives of ``optimal``'s docstring in order, as exact fractions. The
assignor must reach the best score of every part. A scipy MILP checks part A on scenarios too
big to enumerate. Then invariants (hypothesis), the comparison with high-availability, and
hand-written cases."""

from __future__ import annotations

import copy
import itertools
import uuid
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kassign import assign_tasks
from kassign.core.errors import KassignError, UnknownAssignorError
from kassign.groups.streams.classic import assign_streams_classic
from kassign.groups.streams.classic.lexflow import lexicographic_flow
from kassign.groups.streams.classic.optimal import balanced_bounds, tag_levels

LONG_MAX = 2**63 - 1


def pid(n: int) -> str:
    return str(uuid.UUID(int=n))


# --- the scenario as the brute-force solver reads it ------------------------------------------------


class Facts:
    """What the objectives read, straight from a scenario document (each task's offset sum reported by
    at most one consumer per client, so no merge order enters)."""

    def __init__(self, doc: dict) -> None:
        self.doc = doc
        subs = doc["subtopologies"]
        self.tasks = [f"{s}_{p}" for s in sorted(subs, key=int) for p in range(subs[s]["partitions"])]
        stateful = {f"{s}_{p}" for s in subs if subs[s].get("stateful") for p in range(subs[s]["partitions"])}
        self.stateful = [t for t in self.tasks if t in stateful]
        self.stateless = [t for t in self.tasks if t not in stateful]
        self.clients = list(doc["clients"])
        self.threads = {c: len(spec["consumers"]) for c, spec in doc["clients"].items()}
        self.ends = {t: doc.get("end_offset_sums", {}).get(t, 0) for t in self.stateful}
        bound = doc.get("acceptable_recovery_lag", 10_000)
        self.lack, self.caught_up, self.runs = {}, {}, {}
        for c, spec in doc["clients"].items():
            sums = {t: v for m in spec["consumers"].values() for t, v in m.get("offset_sums", {}).items()}
            owned = {t for m in spec["consumers"].values() for t in m.get("owned", [])}
            for t in self.tasks:
                self.runs[c, t] = t in owned or sums.get(t) == -2
            for t in self.stateful:
                v = sums.get(t)
                lag = self.ends[t] if v is None or v > self.ends[t] else (-2 if v == -2 else self.ends[t] - v)
                self.lack[c, t] = 0 if lag == -2 else lag
                self.caught_up[c, t] = bound == LONG_MAX or lag == -2 or lag <= bound
        self.standbys = min(doc.get("num_standby_replicas", 0), len(self.clients) - 1)
        self.tag_keys = doc.get("rack_aware_assignment_tags", [])
        self.tags = {c: spec.get("client_tags", {}) for c, spec in doc["clients"].items()}

    def balance(self, counts: dict[str, int]) -> Fraction:
        return sum(Fraction(n * n, self.threads[c]) for c, n in counts.items())

    def counts(self, placement: dict[str, str], base: dict[str, int] | None = None) -> dict[str, int]:
        counts = dict(base) if base else {c: 0 for c in self.clients}
        for c in placement.values():
            counts[c] += 1
        return counts

    # the objectives, each a tuple to minimise
    def score_a(self, active: dict[str, str]) -> tuple:
        available = sum(self.caught_up[c, t] for t, c in active.items())
        kept = sum(self.runs[c, t] and self.caught_up[c, t] for t, c in active.items())
        return (self.balance(self.counts(active)), -available, -kept,
                sum(self.lack[c, t] for t, c in active.items()))

    def score_b(self, active: dict[str, str], standby: dict[str, tuple[str, ...]]) -> tuple:
        distinct = sum(len({self.tags[c][k] for c in (active[t], *standby[t])}) for t in standby for k in self.tag_keys)
        counts = {c: 0 for c in self.clients}
        for chosen in standby.values():
            for c in chosen:
                counts[c] += 1
        return -distinct, self.balance(counts), sum(self.lack[c, t] for t, chosen in standby.items() for c in chosen)

    def score_c(self, stateful_active: dict[str, str], stateless_active: dict[str, str]) -> tuple:
        counts = self.counts(stateless_active, self.counts(stateful_active))
        return self.balance(counts), -sum(self.runs[c, t] for t, c in stateless_active.items())

    # brute force
    def best_a(self) -> tuple:
        return min(self.score_a(dict(zip(self.stateful, combo)))
                   for combo in itertools.product(self.clients, repeat=len(self.stateful)))

    def best_b(self, active: dict[str, str]) -> tuple:
        choices = [list(itertools.combinations([c for c in self.clients if c != active[t]], self.standbys))
                   for t in self.stateful]
        return min(self.score_b(active, dict(zip(self.stateful, combo))) for combo in itertools.product(*choices))

    def best_c(self, stateful_active: dict[str, str]) -> tuple:
        return min(self.score_c(stateful_active, dict(zip(self.stateless, combo)))
                   for combo in itertools.product(self.clients, repeat=len(self.stateless)))


def parts(doc: dict, answer: dict) -> tuple[dict, dict, dict]:
    """The answer as (stateful task -> active client, stateful task -> standby clients, stateless task -> client)."""
    facts = Facts(doc)
    active = {t: c for c, spec in answer["clients"].items() for t in spec["active"]}
    standby: dict[str, list[str]] = {t: [] for t in facts.stateful}
    for c, spec in answer["clients"].items():
        for t in spec["standby"]:
            standby[t].append(c)
    return ({t: active[t] for t in facts.stateful}, {t: tuple(v) for t, v in standby.items()},
            {t: active[t] for t in facts.stateless})


# --- scenarios -----------------------------------------------------------------------------------


@st.composite
def scenarios(draw, max_clients: int = 4, max_stateful: int = 5, max_stateless: int = 3, tags: bool = True) -> dict:
    n_clients = draw(st.integers(1, max_clients))
    uuids = [pid(n) for n in draw(st.lists(st.integers(1, 2**64 - 1), min_size=n_clients, max_size=n_clients,
                                           unique=True))]
    n_stateful = draw(st.integers(0, max_stateful))
    n_stateless = draw(st.integers(0, max_stateless))
    if n_stateful + n_stateless == 0:
        n_stateful = 1
    subs = {}
    if n_stateful:
        subs["0"] = {"partitions": n_stateful, "stateful": True}
    if n_stateless:
        subs["1"] = {"partitions": n_stateless, "stateful": False}
    stateful = [f"0_{p}" for p in range(n_stateful)]
    every = stateful + [f"1_{p}" for p in range(n_stateless)]
    big = draw(st.sampled_from([1, 1, 1, 2**40, 2**52]))  # the last runs the flow on Python integers
    ends = {t: draw(st.integers(0, 1000)) * big for t in stateful}
    owner = {t: draw(st.sampled_from(uuids + [None])) for t in every}  # the previous active client, if any
    clients = {}
    for u in uuids:
        threads = draw(st.integers(1, 3))
        consumers = {f"{u}-StreamThread-{i}": {"owned": [], "offset_sums": {}} for i in range(threads)}
        members = list(consumers)
        for t in every:
            member = consumers[members[draw(st.integers(0, threads - 1))]]
            if owner[t] == u:
                member["owned"].append(t)
                if t in stateful:  # running (-2), or still restoring
                    member["offset_sums"][t] = draw(st.sampled_from([-2, -2, max(0, ends[t] - 30 * big)]))
            elif t in stateful and draw(st.booleans()):
                member["offset_sums"][t] = draw(st.sampled_from(
                    [0, ends[t], max(0, ends[t] - 5 * big), max(0, ends[t] - 400 * big), ends[t] + 7]))
        clients[u] = {"consumers": consumers}
    doc = {"subtopologies": subs, "end_offset_sums": ends, "clients": clients,
           "num_standby_replicas": draw(st.integers(0, 2)),
           "acceptable_recovery_lag": draw(st.sampled_from([0, 10, 100, 1000, LONG_MAX])) * (big if big < 2**60 else 1)}
    doc["acceptable_recovery_lag"] = min(doc["acceptable_recovery_lag"], LONG_MAX)
    if tags and draw(st.booleans()):
        keys = draw(st.sampled_from([["zone"], ["zone", "rack"]]))
        crossing = draw(st.booleans()) and big == 1  # crossing keys: a float program, exact below 2^52
        for spec in clients.values():
            zone = draw(st.sampled_from("ab"))
            rack = draw(st.sampled_from("xy")) if crossing else zone + draw(st.sampled_from("xy"))
            spec["client_tags"] = {"zone": zone, "rack": rack}
        doc["rack_aware_assignment_tags"] = keys
    return doc


def checked(doc: dict) -> tuple[Facts, dict, tuple]:
    answer = assign_tasks("optimal", doc)
    facts = Facts(doc)
    return facts, answer, parts(doc, answer)


# --- against the exact solver ---------------------------------------------------------------------


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_every_part_is_optimal_against_brute_force(doc: dict) -> None:
    facts, _, (active, standby, stateless) = checked(doc)
    assert facts.score_a(active) == facts.best_a()
    if facts.standbys:
        assert facts.score_b(active, standby) == facts.best_b(active)
    assert facts.score_c(active, stateless) == facts.best_c(active)


def _milp_best_a(facts: Facts) -> tuple:
    """Part A as a staged integer program (HiGHS): balance through unit levels costing 2k - 1 per thread
    share, then availability, then stickiness, then restoration, each kept at its optimum for the next."""
    from scipy.optimize import LinearConstraint, milp

    tasks, clients = facts.stateful, facts.clients
    n, m = len(tasks), len(clients)
    x = n * m
    size = x + m * n
    scale = np.lcm.reduce([facts.threads[c] for c in clients])
    balance = np.zeros(size)
    available = np.zeros(size)
    stick = np.zeros(size)
    restore = np.zeros(size)
    for i, t in enumerate(tasks):
        for j, c in enumerate(clients):
            available[i * m + j] = -facts.caught_up[c, t]
            stick[i * m + j] = -(facts.runs[c, t] and facts.caught_up[c, t])
            restore[i * m + j] = facts.lack[c, t]
    for j, c in enumerate(clients):
        for k in range(n):
            balance[x + j * n + k] = (2 * k + 1) * (scale // facts.threads[c])
    rows = []
    lo, hi = [], []
    for i in range(n):
        row = np.zeros(size)
        row[i * m:(i + 1) * m] = 1
        rows.append(row), lo.append(1), hi.append(1)
    for j in range(m):
        row = np.zeros(size)
        row[[i * m + j for i in range(n)]] = 1
        row[x + j * n:x + (j + 1) * n] = -1
        rows.append(row), lo.append(0), hi.append(0)
    constraints = [LinearConstraint(np.array(rows), lo, hi)]
    values = []
    for objective in (balance, available, stick, restore):
        result = milp(objective, constraints=constraints, integrality=np.ones(size), bounds=(0, 1),
                      options={"mip_rel_gap": 0})
        assert result.success
        best = round(float(objective @ np.round(result.x)))
        values.append(best)
        constraints.append(LinearConstraint(objective.reshape(1, -1), -np.inf, best + 0.5))
    return Fraction(values[0], int(scale)), values[1], values[2], values[3]


@pytest.mark.parametrize("seed", range(6))
def test_part_a_is_optimal_against_milp_on_bigger_scenarios(seed: int) -> None:
    rnd = np.random.default_rng(seed)
    n_clients, n_tasks = int(rnd.integers(3, 7)), int(rnd.integers(8, 15))
    ends = {f"0_{p}": int(rnd.integers(0, 10_000)) for p in range(n_tasks)}
    clients = {}
    for ci in range(n_clients):
        sums = {t: (-2 if rnd.random() < 0.3 else int(rnd.integers(0, e + 1))) for t, e in ends.items()
                if rnd.random() < 0.4}
        owned = [t for t, v in sums.items() if v == -2]
        clients[pid(ci + 1)] = {"consumers": {f"c{ci}-{k}": {"owned": owned if k == 0 else [],
                                                             "offset_sums": sums if k == 0 else {}}
                                              for k in range(int(rnd.integers(1, 4)))}}
    doc = {"subtopologies": {"0": {"partitions": n_tasks, "stateful": True}}, "end_offset_sums": ends,
           "clients": clients, "acceptable_recovery_lag": int(rnd.choice([0, 500, 5000]))}
    facts, _, (active, _, _) = checked(doc)
    assert facts.score_a(active) == _milp_best_a(facts)


# --- invariants -----------------------------------------------------------------------------------


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(max_clients=5, max_stateful=8, max_stateless=5))
def test_invariants(doc: dict) -> None:
    facts, answer, (active, standby, stateless) = checked(doc)
    clients = answer["clients"]
    assert set(clients) == set(doc["clients"])
    assert sorted(t for c in clients.values() for t in c["active"]) == sorted(facts.tasks)  # one active each
    for t, chosen in standby.items():
        assert len(chosen) == facts.standbys  # min(num_standby_replicas, clients - 1), all placed
        assert len(set(chosen)) == len(chosen) and active[t] not in chosen
    assert not any(t in facts.stateless for c in clients.values() for t in c["standby"])
    assert answer["probing_rebalance"] is False  # no warm-ups, nothing to probe
    # the consumers split exactly their client's tasks
    for process, spec in doc["clients"].items():
        mine = [answer["consumers"][m] for m in spec["consumers"]]
        assert sorted(t for m in mine for t in m["active"]) == clients[process]["active"]
        assert sorted(t for m in mine for t in m["standby"]) == clients[process]["standby"]
    # balance: the stateful counts are within the apportionment's bounds, and with equal threads
    # they differ by at most one
    counts = facts.counts(active)
    if len(set(facts.threads.values())) == 1:
        assert max(counts.values()) - min(counts.values()) <= 1
        totals = facts.counts(stateless, counts)
        assert max(totals.values()) - min(totals.values()) <= 1


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(max_clients=5, max_stateful=8, max_stateless=4))
def test_caught_up_actives_stay_when_balance_allows(doc: dict) -> None:
    """A task running on a caught-up client that optimal hands to a client not caught up on it left only
    because balance made it: its client cannot take it back (at its balanced maximum, or the receiver at
    its minimum), and swapping it for one of its client's tasks would not keep more tasks caught up."""
    facts, _, (active, _, _) = checked(doc)
    low, high = balanced_bounds(len(facts.stateful), [facts.threads[c] for c in facts.clients])
    index = {c: j for j, c in enumerate(facts.clients)}
    counts = facts.counts(active)
    for t, d in active.items():
        keepers = [c for c in facts.clients if facts.runs[c, t] and facts.caught_up[c, t]]
        if len(keepers) != 1 or keepers[0] == d or facts.caught_up[d, t]:
            continue
        c = keepers[0]
        assert counts[c] == high[index[c]] or counts[d] == low[index[d]]
        assert all(facts.caught_up[c, x] and not facts.caught_up[d, x] for x, y in active.items() if y == c)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(max_clients=5, max_stateful=8, max_stateless=4))
def test_a_settled_assignment_stays_as_it_is(doc: dict) -> None:
    """The next rebalance after optimal's answer took effect (every active running, every standby caught
    up, nobody else holding state) gives the same answer: caught-up actives stay where balance allows."""
    first = assign_tasks("optimal", doc)
    again = copy.deepcopy(doc)
    for process, spec in again["clients"].items():
        given_ = first["clients"][process]
        members = list(spec["consumers"])
        for member in members:
            spec["consumers"][member] = {"owned": [], "offset_sums": {}}
        head = spec["consumers"][members[0]]
        head["owned"] = list(given_["active"])
        head["offset_sums"] = {t: -2 for t in given_["active"] if t.startswith("0_")}
        head["offset_sums"].update({t: doc["end_offset_sums"][t] for t in given_["standby"]})
    assert assign_tasks("optimal", again)["clients"] == first["clients"]


def test_settled_standbys_of_empty_changelogs_stay_put() -> None:
    """Found by the property above: with tasks whose changelogs are empty, restoring a standby anywhere costs
    nothing, so only stickiness (B4) keeps a settled standby where it is."""
    clients = [f"00000000-0000-0000-0000-00000000000{i}" for i in range(1, 5)]
    doc = {"subtopologies": {"0": {"partitions": 4, "stateful": True}},
           "end_offset_sums": {"0_0": 0, "0_1": 0, "0_2": 1, "0_3": 0}, "num_standby_replicas": 2,
           "acceptable_recovery_lag": 0,
           "clients": {c: {"consumers": {f"c{i}": {"owned": [f"0_{p}" for p in range(4)] if i == 2 else [],
                                                   "offset_sums": {f"0_{p}": -2 for p in range(4)} if i == 2
                                                   else {}}}} for i, c in enumerate(clients)}}
    first = assign_tasks("optimal", doc)
    settled = copy.deepcopy(doc)
    for i, c in enumerate(clients):
        held = first["clients"][c]
        settled["clients"][c]["consumers"] = {f"c{i}": {
            "owned": held["active"], "offset_sums": {**{t: -2 for t in held["active"]},
                                                     **{t: doc["end_offset_sums"][t] for t in held["standby"]}}}}
    assert assign_tasks("optimal", settled)["clients"] == first["clients"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(max_clients=5, max_stateful=8, max_stateless=4))
def test_never_worse_than_high_availability(doc: dict) -> None:
    """Part A is never worse than Kafka's; parts B and C are not either where Kafka chose the same
    actives (B and C are scored around A's actives) and handed out no warm-ups."""
    facts, _, (active, standby, stateless) = checked(doc)
    ha = assign_streams_classic("high-availability", doc)
    ha_active, ha_standby, ha_stateless = parts(doc, ha)
    assert facts.score_a(active) <= facts.score_a(ha_active)
    if ha_active == active:
        if not ha["probing_rebalance"] and all(len(v) == facts.standbys for v in ha_standby.values()):
            assert facts.score_b(active, standby) <= facts.score_b(active, ha_standby)
        assert facts.score_c(active, stateless) <= facts.score_c(active, ha_stateless)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), st.randoms(use_true_random=False))
def test_deterministic_and_independent_of_listing_order(doc: dict, rnd) -> None:
    first = assign_tasks("optimal", doc)
    shuffled = copy.deepcopy(doc)
    items = list(shuffled["clients"].items())
    rnd.shuffle(items)
    shuffled["clients"] = dict(items)
    assert assign_tasks("optimal", shuffled)["clients"] == first["clients"]


# --- hand-written cases ---------------------------------------------------------------------------


def doc_of(clients: dict, n_stateful: int, ends: dict | None = None, n_stateless: int = 0, **settings_) -> dict:
    """``clients``: number -> (threads, offset sums of the first consumer, owned tasks)."""
    subs = {"0": {"partitions": n_stateful, "stateful": True}}
    if n_stateless:
        subs["1"] = {"partitions": n_stateless, "stateful": False}
    doc = {"subtopologies": subs, "end_offset_sums": ends or {}, "clients": {}}
    for n, (threads, sums, owned) in clients.items():
        doc["clients"][pid(n)] = {"consumers": {
            f"c{n}-{k}": {"owned": owned if k == 0 else [], "offset_sums": sums if k == 0 else {}}
            for k in range(threads)}}
    doc.update(settings_)
    return doc


def actives_of(answer: dict) -> dict[int, list[str]]:
    return {int(uuid.UUID(c)): spec["active"] for c, spec in answer["clients"].items()}


def test_the_docstring_example() -> None:
    every = ["0_0", "0_1", "0_2", "0_3"]
    doc = doc_of({1: (1, {t: -2 for t in every}, every), 2: (1, {"0_2": 950, "0_3": 400}, [])}, 4,
                 {t: 1000 for t in every}, acceptable_recovery_lag=100)
    answer = assign_tasks("optimal", doc)
    assert actives_of(answer) == {1: ["0_0", "0_1"], 2: ["0_2", "0_3"]}
    assert answer["probing_rebalance"] is False
    # Kafka's high-availability: everything stays on the caught-up client, warm-ups on the other
    ha = assign_streams_classic("high-availability", doc)
    assert actives_of(ha) == {1: every, 2: []}
    assert ha["clients"][pid(2)]["standby"] == ["0_1", "0_3"] and ha["probing_rebalance"]


def test_a_newcomer_takes_the_tasks_cheapest_to_restore() -> None:
    every = ["0_0", "0_1", "0_2", "0_3"]
    ends = {"0_0": 100, "0_1": 500, "0_2": 300, "0_3": 50}
    doc = doc_of({1: (1, {t: -2 for t in every}, every), 2: (1, {}, [])}, 4, ends)
    assert actives_of(assign_tasks("optimal", doc)) == {1: ["0_1", "0_2"], 2: ["0_0", "0_3"]}


def test_a_balanced_caught_up_assignment_is_reused() -> None:
    """Kafka's shouldReturnFalseIfPreviousAssignmentIsReused, as a fact about optimal: nothing moves."""
    doc = doc_of({1: (1, {"0_0": -2, "0_2": -2}, ["0_0", "0_2"]), 2: (1, {"0_1": -2, "0_3": -2}, ["0_1", "0_3"])},
                 4, {f"0_{p}": 10 for p in range(4)})
    answer = assign_tasks("optimal", doc)
    assert actives_of(answer) == {1: ["0_0", "0_2"], 2: ["0_1", "0_3"]}
    assert not answer["probing_rebalance"]


def test_a_caught_up_standby_takes_over_from_a_departed_client() -> None:
    doc = doc_of({2: (1, {"0_0": 0, "0_1": -2}, ["0_1"]), 3: (1, {"0_0": 990}, [])}, 2, {"0_0": 1000, "0_1": 1000})
    # 0_0's active left; client 2 has none of it (offset 0: lacks 1000), client 3 a standby lacking 10
    assert actives_of(assign_tasks("optimal", doc)) == {2: ["0_1"], 3: ["0_0"]}


def balanced_counts(total: int, weights: list[int], base: list[int]) -> set[tuple[int, ...]]:
    """Every way to add ``total`` units on top of ``base`` with the least sum (base + n)^2 / w, by enumeration."""
    best, found = None, set()
    for counts in itertools.product(range(total + 1), repeat=len(weights)):
        if sum(counts) != total:
            continue
        score = sum(Fraction((b + n) ** 2, w) for b, n, w in zip(base, counts, weights))
        if best is None or score < best:
            best, found = score, {counts}
        elif score == best:
            found.add(counts)
    return found


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=4), st.integers(0, 9), st.data())
def test_balanced_bounds_are_exactly_the_balanced_counts(weights, total, data) -> None:
    base = data.draw(st.lists(st.integers(0, 4), min_size=len(weights), max_size=len(weights)))
    low, high = balanced_bounds(total, weights, base)
    boxed = {counts for counts in itertools.product(*(range(lo, hi + 1) for lo, hi in zip(low, high)))
             if sum(counts) == total}
    assert boxed == balanced_counts(total, weights, base)


def test_threads_weigh_the_balance() -> None:
    # one thread and three: four tasks go one and three
    assert balanced_counts(4, [1, 3], [0, 0]) == {(1, 3)}
    # six: A's second task (3/1) ties B's fifth (9/3), so either
    assert balanced_counts(6, [1, 3], [0, 0]) == {(1, 5), (2, 4)}
    doc = doc_of({1: (1, {"0_4": -2, "0_5": -2}, ["0_4", "0_5"]), 2: (3, {}, [])}, 6, {f"0_{p}": 10 for p in range(6)})
    # A keeps both its running tasks: the tie lets stickiness decide
    assert actives_of(assign_tasks("optimal", doc))[1] == ["0_4", "0_5"]


def test_stateless_tasks_even_out_the_active_count() -> None:
    doc = doc_of({1: (1, {}, []), 2: (1, {}, []), 3: (1, {}, [])}, 2, {"0_0": 5, "0_1": 5}, n_stateless=4)
    counts = sorted(len(v) for v in actives_of(assign_tasks("optimal", doc)).values())
    assert counts == [2, 2, 2]


def test_standbys_spread_over_zones_before_load() -> None:
    """client_tags' docstring example: zones a, a, b; one standby each: zone b must hold the standbys of the
    two tasks active in zone a, however loaded that makes it."""
    doc = doc_of({1: (1, {"0_0": -2}, ["0_0"]), 2: (1, {"0_1": -2}, ["0_1"]), 3: (1, {"0_2": -2}, ["0_2"])}, 3,
                 {"0_0": 10, "0_1": 10, "0_2": 10}, num_standby_replicas=1, rack_aware_assignment_tags=["zone"])
    for n, zone in ((1, "a"), (2, "a"), (3, "b")):
        doc["clients"][pid(n)]["client_tags"] = {"zone": zone}
    answer = assign_tasks("optimal", doc)
    assert answer["clients"][pid(3)]["standby"] == ["0_0", "0_1"]
    assert len(answer["clients"][pid(1)]["standby"] + answer["clients"][pid(2)]["standby"]) == 1


def test_standbys_prefer_the_client_that_has_the_state() -> None:
    doc = doc_of({1: (1, {"0_0": -2}, ["0_0"]), 2: (1, {}, []), 3: (1, {"0_0": 995}, [])}, 1, {"0_0": 1000},
                 num_standby_replicas=1)
    # balance ties between clients 2 and 3 (one standby somewhere); 3 lacks 5 offsets, 2 all 1000
    assert assign_tasks("optimal", doc)["clients"][pid(3)]["standby"] == ["0_0"]


def test_more_standbys_than_other_clients() -> None:
    doc = doc_of({1: (1, {}, []), 2: (1, {}, [])}, 2, {"0_0": 1, "0_1": 1}, num_standby_replicas=3)
    answer = assign_tasks("optimal", doc)
    for spec in answer["clients"].values():
        assert len(spec["active"]) == 1 and len(spec["standby"]) == 1


def test_tag_levels_nest_or_cross() -> None:
    class Inp:
        tag_keys = ["rack", "zone"]
        tags = [{"zone": "a", "rack": "a1"}, {"zone": "a", "rack": "a2"}, {"zone": "b", "rack": "b1"}]

    assert tag_levels(Inp) == [[0, 0, 1], [0, 1, 2]]  # zone (coarser) first
    Inp.tags = [{"zone": "a", "rack": "x"}, {"zone": "b", "rack": "x"}, {"zone": "b", "rack": "y"}]
    assert tag_levels(Inp) is None


def test_offsets_beyond_64_bits_of_cost_stay_exact() -> None:
    big = 2**62
    doc = doc_of({1: (1, {"0_0": -2, "0_1": -2, "0_2": -2}, ["0_0", "0_1", "0_2"]),
                  2: (1, {"0_1": big - 3, "0_2": 1}, [])}, 3, {"0_0": big, "0_1": big, "0_2": big})
    # client 2 must take one task: 0_1, where it lacks 3 offsets (and not 0_2, lacking 2^62 - 1)
    assert actives_of(assign_tasks("optimal", doc)) == {1: ["0_0", "0_2"], 2: ["0_1"]}


def test_crossing_tag_keys_with_huge_offsets_are_refused() -> None:
    doc = doc_of({1: (1, {}, []), 2: (1, {}, []), 3: (1, {}, [])}, 2, {"0_0": 2**62, "0_1": 2**62},
                 num_standby_replicas=1, rack_aware_assignment_tags=["zone", "rack"])
    for n, (zone, rack) in enumerate([("a", "x"), ("b", "x"), ("b", "y")], start=1):
        doc["clients"][pid(n)]["client_tags"] = {"zone": zone, "rack": rack}
    with pytest.raises(KassignError, match="crossing tag keys"):
        assign_tasks("optimal", doc)
    doc["end_offset_sums"] = {"0_0": 10, "0_1": 10}
    answer = assign_tasks("optimal", doc)
    for t in ("0_0", "0_1"):  # each task's two copies differ in zone and in rack where they can
        holders = [n for n in (1, 2, 3) for spec in [answer["clients"][pid(n)]] if t in spec["active"] + spec["standby"]]
        assert len(holders) == 2


def test_lexicographic_flow_puts_earlier_stages_first() -> None:
    """lexflow's docstring example: x and y each go to A or B, A takes one."""
    tails, heads = [0, 0, 1, 1, 2, 3], [2, 3, 2, 3, 4, 4]
    flow = lexicographic_flow(5, np.array(tails), np.array(heads), np.zeros(6, np.int64), np.array([1, 1, 1, 1, 1, 2]),
                              np.array([1, 1, 0, 0, -2]), [np.array([0, 1, 0, 0, 0, 0]), np.array([1, 0, 0, 5, 0, 0])])
    assert flow.tolist() == [1, 0, 0, 1, 1, 1]


def test_registered_everywhere() -> None:
    doc = doc_of({1: (1, {}, [])}, 1, {"0_0": 1})
    assert assign_streams_classic("optimal", doc) == assign_tasks("optimal", doc, protocol="classic")
    with pytest.raises(UnknownAssignorError, match="optimal"):
        assign_streams_classic("best", doc)
