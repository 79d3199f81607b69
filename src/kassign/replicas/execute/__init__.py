"""Carrying a reassignment plan out, the parts that need no cluster: the order of the moves (:mod:`.batches`) and
the replication throttle Kafka's own tool sets for them (:mod:`.throttle`)."""

from kassign.replicas.execute.batches import Disk, Move, Schedule, moves_between, plan_batches

__all__ = ["Disk", "Move", "Schedule", "moves_between", "plan_batches"]
