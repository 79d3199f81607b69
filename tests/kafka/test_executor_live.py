"""``kassign plan --execute`` end to end on a real multi-broker Kafka cluster, when one is given:
``KASSIGN_REASSIGN_BOOTSTRAP=host:port`` and ``KASSIGN_REASSIGN_TOPIC=name`` (a topic whose data may be moved; rf
below the number of brokers). Every partition's replicas are moved one broker on (as ids sorted), carried out with a
throttle, verified done, and no throttle is left; then moved back. Skipped, saying so, without the variables."""

from __future__ import annotations

import json
import os

import pytest

from kassign.kafka import executor as E
from kassign.kafka import metadata as live

BOOTSTRAP = os.environ.get("KASSIGN_REASSIGN_BOOTSTRAP")
TOPIC = os.environ.get("KASSIGN_REASSIGN_TOPIC")

pytestmark = pytest.mark.skipif(not (BOOTSTRAP and TOPIC), reason="no real multi-broker Kafka given: set "
                                "KASSIGN_REASSIGN_BOOTSTRAP=host:port and KASSIGN_REASSIGN_TOPIC=name to run")


def _shifted(current: dict) -> tuple[dict, list[int]]:
    with E.Admin(BOOTSTRAP, timeout=30) as admin:
        ids = sorted(b.node_id for b in admin.metadata([TOPIC]).brokers)
    moved = []
    for entry in current["partitions"]:
        moved.append({**entry, "replicas": [ids[(ids.index(b) + 1) % len(ids)] for b in entry["replicas"]]})
    return {"version": 1, "partitions": moved}, ids


def test_move_verify_and_back(tmp_path):
    current = live.current_assignment(BOOTSTRAP, [TOPIC], timeout=30)
    plan, _ = _shifted(current)
    for name, document in (("there.json", plan), ("back.json", current)):
        path = tmp_path / name
        path.write_text(json.dumps(document))
        record = E.execute(path, BOOTSTRAP, throttle=50_000_000, timeout=30)
        assert {rec["state"] for rec in record["moves"].values()} <= {"done"}
        assert record["in_sync"]["not_in_sync"] == []
        status = E.verify(path, BOOTSTRAP, timeout=30)
        assert set(status["counts"]) <= {"done", "unchanged"} and status["throttles"] == {}
