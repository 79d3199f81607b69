"""What Python callers pass: numpy scalars and tuples accepted; nonsense refused with KassignError."""

from __future__ import annotations

import numpy as np
import pytest

import kassign
from kassign.core.errors import KassignError


def test_numpy_integers_and_tuples_are_accepted_where_ints_and_lists_go() -> None:
    scenario = {"topics": {"t0": np.int64(4)},
                "members": {"a": {"topics": ("t0",), "owned": (("t0", np.int32(3)),), "generation": np.int16(2)},
                            "b": {"topics": ["t0"]}}}
    owned_by_a = kassign.assign("sticky", scenario)["a"]
    assert ("t0", 3) in owned_by_a
    # assign's own output shape goes back in as `owned`
    again = {"topics": {"t0": 4}, "members": {m: {"topics": ["t0"], "owned": parts}
                                                for m, parts in kassign.assign("range", scenario).items()}}
    assert kassign.assign("sticky", again) == kassign.assign("range", scenario)
    assert kassign.assign_replicas([(np.int64(0), None), (1, None)], np.int32(2), np.int8(2), start_index=0) == \
        kassign.assign_replicas([(0, None), (1, None)], 2, 2, start_index=0)


@pytest.mark.parametrize(("strategy", "scenario", "message"), [
    (None, {"topics": {}, "members": {}}, "strategy must be an assignor name"),
    (3.5, {"topics": {}, "members": {}}, "strategy must be an assignor name"),
    ("range", {"topics": {}, "members": {7: {"topics": []}}}, "member ids must be strings"),
    ("range", {"topics": {5: 1}, "members": {}}, "names must be strings"),
    ("range", {"topics": {"t": 2**31}, "members": {}}, "at most 2147483647"),
])
def test_nonsense_is_a_kassign_error(strategy, scenario, message: str) -> None:
    with pytest.raises(KassignError, match=message):
        kassign.assign(strategy, scenario)


@pytest.mark.parametrize(("brokers", "message"), [
    ("0,1", "brokers must be a list"),
    ([(0, None, "x", 1)], "a broker must be an"),
    ([("0", None)], "broker id must be a whole number"),
    ([(2**31, None)], "broker id must be from 0 to 2147483647"),
])
def test_brokers_not_given_as_pairs_are_refused(brokers, message: str) -> None:
    with pytest.raises(KassignError, match=message):
        kassign.assign_replicas(brokers, 3, 1)


@pytest.mark.parametrize(("strategy", "options", "message"), [
    ("random", {"seed": -1}, "random option seed"),
    ("random", {"seed": True}, "random option seed"),
    ("sticky", {"prefer_rack_aware": "yes"}, "sticky option prefer_rack_aware takes true or false"),
    ("cooperative-sticky", {"prefer_rack_aware": 1}, "prefer_rack_aware takes true or false"),
    ("range", {"prefer_rack_aware": None}, "prefer_rack_aware takes true or false"),
    ("load-aware", {"tolerance": float("nan")}, "tolerance takes a finite number >= 0"),
    ("load-aware", {"default_load": -1}, "default_load takes a finite number >= 0"),
    ("load-aware", {"capacity": 0}, "capacity takes a finite number > 0"),
    ("load-aware", {"partition_loads": "t0"}, "partition_loads takes an object"),
    ("load-aware", {"partition_loads": {"t0": ["heavy"]}}, r"partition_loads \(t0-0\) takes a finite number"),
])
def test_assignor_options_are_checked_at_construction(strategy: str, options: dict, message: str) -> None:
    with pytest.raises(KassignError, match=message):
        kassign.assign(strategy, {"topics": {"t0": 2}, "members": {"a": {"topics": ["t0"]}}}, **options)
