"""One whole rebalance, round after round, with the safety invariant checked at every step.

A round is: every member prepares (eager members revoke everything, cooperative
ones only unsubscribed topics) and sends JoinGroup; the coordinator completes the
join (new generation, chosen strategy, leader); the leader decodes every
subscription, runs its own instance of the chosen assignor and encodes the
result; the coordinator hands each member its bytes; each member applies them.
Cooperative members that had to give something up ask for another round, which
is how a partition moving between two cooperative members gets there: revoked by
the old owner in round 1, handed to the new one in round 2.

Safety, checked after every step (skipped for the broadcast assignor, which
shares partitions on purpose):

- at no moment do two members own one partition. Members apply their
  assignments in any order, so the check takes the worst interleaving: each
  member's partitions before the sync together with those it gains;
- once no member asks for another round, every partition of every subscribed
  topic that exists is owned by exactly one member.

The leader also does what Kafka's cooperative leader does: it refuses an
assignment that gives a partition to a new owner in the same round that another
member still claims it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kassign.groups.classic.assignors.base import Assignment, TopicPartition, subscribed_partition_counts
from kassign.core.cluster import Cluster
from kassign.core.errors import KassignError
from kassign.groups.flat import FlatAssignment
from kassign.groups.classic.protocol.coordinator import GroupCoordinator, JoinResult
from kassign.groups.classic.protocol.member import GroupMember, RebalanceProtocol
from kassign.groups.classic.protocol.wire import decode_subscription, encode_assignment

SHARING_ASSIGNORS = frozenset({"broadcast"})


class InvariantViolation(KassignError):
    """The group broke a safety rule (a partition with two owners, or one left without an owner)."""


@dataclass(frozen=True)
class RoundRecord:
    generation: int
    protocol: str
    leader: str
    revoked: int  # partitions members gave up in this round (before joining and after syncing)
    assignment: dict[str, tuple[TopicPartition, ...]]


def leader_assign(leader: GroupMember, join: JoinResult, cluster: Cluster) -> dict[str, bytes]:
    """The leader's work: decode subscriptions, run the chosen assignor, encode each member's share."""
    assignor = leader.assignors[join.protocol]
    subscriptions = {r.member_id: decode_subscription(r.metadata(join.protocol), r.instance_id) for r in join.members}
    if type(assignor).__module__.startswith("kassign."):
        result = assignor.assign(cluster, subscriptions)
    else:
        result = _run_users_assignor(assignor, join.protocol, cluster, subscriptions)
    if not isinstance(result, Mapping):
        raise KassignError(f"assignor {join.protocol!r} returned {type(result).__name__}, expected member -> Assignment")
    strangers = set(result) - set(subscriptions)
    if strangers:
        raise KassignError(f"assignor {join.protocol!r} assigned partitions to unknown members {sorted(strangers)}")
    if leader.protocol == RebalanceProtocol.COOPERATIVE and join.protocol not in SHARING_ASSIGNORS:
        _validate_cooperative(join.protocol, subscriptions, result)
    return {m: encode_assignment(result.get(m) or Assignment()) for m in subscriptions}


def _run_users_assignor(assignor: Any, name: str, cluster: Cluster, subscriptions: Mapping[str, Any]) -> Any:
    """A user's assignor, checked as a Kafka leader does not: a failure or an invalid result (a partition
    twice, an unknown topic or member, a partition out of range or of a topic its member does not
    subscribe to) is an error naming the assignor and the first problem."""
    who = f"assignor {name!r}"
    try:
        result = assignor.assign(cluster, subscriptions)
    except KassignError:
        raise
    except Exception as err:
        raise KassignError(f"{who} failed: {type(err).__name__}: {err}") from err
    topics_of = {member: s.topics for member, s in subscriptions.items()}
    FlatAssignment.from_mapping(result, subscribed_partition_counts(cluster, subscriptions), topics_of, who,
                                exclusive=getattr(assignor, "exclusive", True))
    return result


def _validate_cooperative(strategy: str, subscriptions: Mapping, result: Mapping[str, Assignment]) -> None:
    claimed = {tp: m for m, s in subscriptions.items() for tp in s.owned_partitions}
    for member, assignment in result.items():
        for tp in assignment.partitions:
            owner = claimed.get(tp)
            if owner is not None and owner != member:
                raise InvariantViolation(
                    f"assignor {strategy!r} gave {tp.topic}-{tp.partition} to {member!r} while {owner!r} still owns it; "
                    "a cooperative assignor must first revoke it and hand it over in a later round"
                )


def check_exclusive(claims: Mapping[str, tuple[TopicPartition, ...] | list[TopicPartition]], when: str) -> None:
    owner: dict[TopicPartition, str] = {}
    for member, partitions in claims.items():
        for tp in partitions:
            other = owner.setdefault(tp, member)
            if other != member:
                raise InvariantViolation(f"{when}: {tp.topic}-{tp.partition} is owned by both {other!r} and {member!r}")


def check_complete(members: Mapping[str, GroupMember], cluster: Cluster, when: str) -> None:
    subscribed = {t for m in members.values() for t in m.topics if cluster.partition_count(t)}
    owned: dict[str, set[int]] = {}
    for member in members.values():
        for topic, p in member.owned:
            owned.setdefault(topic, set()).add(p)
    for topic in sorted(subscribed):
        have = owned.get(topic, set())
        missing = [p for p in range(cluster.partition_count(topic) or 0) if p not in have]
        if missing:
            shown = ", ".join(f"{topic}-{p}" for p in missing[:5])
            raise InvariantViolation(f"{when}: {len(missing)} subscribed partition(s) have no owner ({shown})")


def run_rebalance(
    coordinator: GroupCoordinator,
    members: Mapping[str, GroupMember],
    cluster: Cluster,
    *,
    max_rounds: int = 10,
    before_sync: Callable[[], None] | None = None,
) -> list[RoundRecord]:
    """Play rounds until no member asks to rejoin; return one record per round.

    ``before_sync`` is called once per round after members have revoked and
    joined, before assignments arrive: the time a round takes passes there.
    """
    if not members:
        return []
    rounds: list[RoundRecord] = []
    while True:
        revoked = 0
        for member_id, member in members.items():
            revoked += len(member.prepare_join())
            coordinator.join(member_id, member.instance_id, member.join_protocols())
        join = coordinator.complete_join()
        sharing = join.protocol in SHARING_ASSIGNORS
        if not sharing:
            check_exclusive({m: mb.owned for m, mb in members.items()}, f"generation {join.generation}, after revoking")
        delivered = coordinator.complete_sync(leader_assign(members[join.leader], join, cluster))
        if before_sync is not None:
            before_sync()
        outcomes = {m: members[m].on_sync(join.protocol, data, join.generation) for m, data in delivered.items()}
        if not sharing:
            worst = {m: members[m].history + o.revoked for m, o in outcomes.items()}
            check_exclusive(worst, f"generation {join.generation}, while members apply their assignments")
        revoked += sum(len(o.revoked) for o in outcomes.values())
        rounds.append(RoundRecord(join.generation, join.protocol, join.leader, revoked,
                                  {m: members[m].owned for m in members}))
        if not any(o.needs_rejoin for o in outcomes.values()):
            break
        if len(rounds) >= max_rounds:
            raise InvariantViolation(
                f"the group did not settle after {max_rounds} rounds with {join.protocol!r}: members keep revoking"
            )
    if not sharing:
        check_complete(members, cluster, f"generation {rounds[-1].generation}, group stable")
    return rounds
