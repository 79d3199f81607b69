"""One consumer-group member in a process of its own, so that a test can kill it (SIGKILL: no LeaveGroup).

    python -m tests.groups.classic.clients.member_process BOOTSTRAP GROUP TOPIC LOG

A kafka-python consumer with kassign's cooperative-sticky adapter polls until it is killed. It writes one
JSON object a line to LOG, flushed at once: ``{"member": id, "generation": g, "owned": [[t, p], ...]}``
whenever its assignment changes, and ``{"consumed": [[t, p, offset], ...]}`` after each batch (before
committing it, so a record consumed is on file even if the member dies before its commit).
"""

from __future__ import annotations

import json
import sys


def main(bootstrap: str, group: str, topic: str, log_path: str) -> None:
    from kafka import KafkaConsumer

    from kassign.groups.classic.clients.kafka_python import CooperativeStickyAssignor

    assignor = CooperativeStickyAssignor()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, partition_assignment_strategy=[assignor],
                             enable_auto_commit=False, auto_offset_reset="earliest", session_timeout_ms=6000,
                             heartbeat_interval_ms=300, max_poll_interval_ms=8000, request_timeout_ms=15000,
                             metadata_max_age_ms=2000)
    consumer.subscribe([topic])
    seen: tuple = ()
    with open(log_path, "a", buffering=1) as log:
        while True:
            batches = consumer.poll(timeout_ms=100)
            state = (assignor.kassign.generation, tuple(sorted(assignor.kassign.owned)))
            if state != seen and state[0] >= 0:
                member = consumer._coordinator._generation.member_id
                log.write(json.dumps({"member": member, "generation": state[0], "owned": list(state[1])}) + "\n")
                seen = state
            if batches:
                log.write(json.dumps({"consumed": [[r.topic, r.partition, r.offset] for records in batches.values()
                                                   for r in records]}) + "\n")
                consumer.commit()


if __name__ == "__main__":
    main(*sys.argv[1:5])
