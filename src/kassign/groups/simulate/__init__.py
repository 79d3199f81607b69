"""Replay a consumer group's life under several strategies and compare what each costs.

``scenario`` loads and checks the YAML timeline, ``engine`` plays it on a
simulated clock through the real protocol model (``kassign.groups.classic.protocol``),
``consumer_protocol`` plays it with Kafka 4's consumer group protocol (KIP-848),
``metrics`` defines what is measured, ``report`` draws the plots and the HTML page.
"""

from kassign.groups.simulate.consumer_protocol import ConsumerTimelineRun, TraceEntry
from kassign.groups.simulate.engine import TimelineRun, simulate
from kassign.groups.simulate.metrics import EventRecord, StrategyRun
from kassign.groups.simulate.scenario import Event, MemberPlan, SimScenario, load_sim_scenario, parse_sim_scenario

__all__ = [
    "ConsumerTimelineRun",
    "Event",
    "EventRecord",
    "MemberPlan",
    "SimScenario",
    "StrategyRun",
    "TimelineRun",
    "TraceEntry",
    "load_sim_scenario",
    "parse_sim_scenario",
    "simulate",
]
