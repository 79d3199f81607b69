"""The classic consumer-group rebalance protocol, in process.

``wire`` reads and writes the consumer protocol's Subscription and Assignment
bytes; ``coordinator`` is the broker's side (admission, protocol choice,
generations, leader, static members); ``member`` is a consumer with its own
assignor instances (eager or cooperative); ``rebalance`` plays the join/sync
rounds and checks the safety invariant after every step.

``consumer_group`` is the coordinator of Kafka 4's consumer group protocol (KIP-848):
heartbeats, group / assignment / member epochs, server-side target assignment, and
per-member reconciliation (revoke first, receive only what others have released).
"""

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
