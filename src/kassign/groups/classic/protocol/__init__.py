"""The classic consumer-group rebalance protocol, in process.

``wire`` reads and writes the consumer protocol's Subscription and Assignment
bytes; ``coordinator`` is the broker's side (admission, protocol choice,
generations, leader, static members); ``member`` is a consumer with its own
assignor instances (eager or cooperative); ``rebalance`` plays the join/sync
rounds and checks the safety invariant after every step.

``consumer_group`` is the coordinator of Kafka 4's consumer group protocol (KIP-848):
heartbeats, group / assignment / member epochs, server-side target assignment, and
per-member reconciliation (revoke first, receive only what others have released).

The names below load on first use (PEP 562): reading a live group's Subscription bytes needs ``wire``
only, not the coordinators and the assignors (numba) behind them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kassign.core.lazy import lazy_names

if TYPE_CHECKING:  # what static tools see; loaded lazily at run time
    from kassign.groups.consumer.coordinator import ConsumerGroupCoordinator, MemberState, TopicCatalog
    from kassign.groups.classic.protocol.coordinator import GroupCoordinator, InconsistentGroupProtocolError, JoinResult
    from kassign.groups.classic.protocol.member import GroupMember, RebalanceProtocol, rebalance_protocol_for
    from kassign.groups.classic.protocol.rebalance import InvariantViolation, RoundRecord, run_rebalance
    from kassign.groups.classic.protocol.wire import (
        LATEST_VERSION,
        WireFormatError,
        decode_assignment,
        decode_subscription,
        encode_assignment,
        encode_subscription,
        read_version,
    )

_HOMES = {
    "ConsumerGroupCoordinator": "kassign.groups.consumer.coordinator",
    "MemberState": "kassign.groups.consumer.coordinator",
    "TopicCatalog": "kassign.groups.consumer.coordinator",
    "GroupCoordinator": "kassign.groups.classic.protocol.coordinator",
    "InconsistentGroupProtocolError": "kassign.groups.classic.protocol.coordinator",
    "JoinResult": "kassign.groups.classic.protocol.coordinator",
    "GroupMember": "kassign.groups.classic.protocol.member",
    "RebalanceProtocol": "kassign.groups.classic.protocol.member",
    "rebalance_protocol_for": "kassign.groups.classic.protocol.member",
    "InvariantViolation": "kassign.groups.classic.protocol.rebalance",
    "RoundRecord": "kassign.groups.classic.protocol.rebalance",
    "run_rebalance": "kassign.groups.classic.protocol.rebalance",
    "LATEST_VERSION": "kassign.groups.classic.protocol.wire",
    "WireFormatError": "kassign.groups.classic.protocol.wire",
    "decode_assignment": "kassign.groups.classic.protocol.wire",
    "decode_subscription": "kassign.groups.classic.protocol.wire",
    "encode_assignment": "kassign.groups.classic.protocol.wire",
    "encode_subscription": "kassign.groups.classic.protocol.wire",
    "read_version": "kassign.groups.classic.protocol.wire",
}

__all__ = [
    "LATEST_VERSION",
    "ConsumerGroupCoordinator",
    "GroupCoordinator",
    "GroupMember",
    "InconsistentGroupProtocolError",
    "InvariantViolation",
    "JoinResult",
    "MemberState",
    "RebalanceProtocol",
    "RoundRecord",
    "TopicCatalog",
    "WireFormatError",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
    "read_version",
    "rebalance_protocol_for",
    "run_rebalance",
]

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
