"""Replay a consumer group's life under several strategies and compare what each costs.

``scenario`` loads and checks the YAML timeline, ``engine`` plays it on a
simulated clock through the real protocol model (``kassign.groups.classic.protocol``),
``consumer_protocol`` plays it with Kafka 4's consumer group protocol (KIP-848),
``metrics`` defines what is measured, ``report`` draws the plots and the HTML page.
Kafka Streams timelines have their own: ``streams_scenario``, ``streams_engine`` (every rebalance with
Kafka Streams' task assignors), ``streams_metrics`` and ``streams_report``. The group types whose
coordinator assigns on heartbeats run on ``heartbeat_timeline``'s clock: share groups (KIP-932;
``share_scenario``, ``share_engine``, ``share_metrics``, ``share_report``) and streams groups (KIP-1071,
a Streams timeline with ``protocol: streams``; ``streams_group_engine``, ``streams_group_metrics``,
``streams_group_report``); ``event_charts`` draws their per-event charts.
"""

from kassign.groups.simulate.consumer_protocol import ConsumerTimelineRun, TraceEntry
from kassign.groups.simulate.engine import TimelineRun, simulate
from kassign.groups.simulate.metrics import EventRecord, StrategyRun
from kassign.groups.simulate.scenario import Event, MemberPlan, SimScenario, load_sim_scenario, parse_sim_scenario
from kassign.groups.simulate.share_engine import ShareTimelineRun, simulate_share
from kassign.groups.simulate.share_metrics import ShareEventRecord, ShareRun
from kassign.groups.simulate.share_scenario import ShareTimeline, parse_share_timeline
from kassign.groups.simulate.streams_group_engine import StreamsGroupTimelineRun, simulate_streams_group
from kassign.groups.simulate.streams_group_metrics import StreamsGroupRecord, StreamsGroupRun
from kassign.groups.simulate.streams_engine import simulate_streams
from kassign.groups.simulate.streams_metrics import StreamsEventRecord, StreamsRun, summary_sentences
from kassign.groups.simulate.streams_scenario import StreamsTimeline, load_streams_timeline, parse_streams_timeline

__all__ = [
    "ConsumerTimelineRun",
    "Event",
    "EventRecord",
    "MemberPlan",
    "ShareEventRecord",
    "ShareRun",
    "ShareTimeline",
    "ShareTimelineRun",
    "SimScenario",
    "StrategyRun",
    "StreamsGroupRecord",
    "StreamsGroupRun",
    "StreamsGroupTimelineRun",
    "StreamsEventRecord",
    "StreamsRun",
    "StreamsTimeline",
    "TimelineRun",
    "TraceEntry",
    "load_sim_scenario",
    "load_streams_timeline",
    "parse_share_timeline",
    "parse_sim_scenario",
    "parse_streams_timeline",
    "simulate",
    "simulate_share",
    "simulate_streams",
    "simulate_streams_group",
    "summary_sentences",
]
