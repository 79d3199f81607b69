"""Share-group timelines at random (hypothesis): what must hold whatever happens."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kassign.groups.simulate.share_engine import ShareTimelineRun
from kassign.groups.simulate.share_scenario import parse_share_timeline
from tests.groups.simulate.timelines import draw_events, draw_topics


class Checked(ShareTimelineRun):
    """After every step: a member fetches only live partitions of topics it subscribes to, only while it
    runs, and the fetcher counts are what the members fetch."""

    def _after_step(self) -> None:
        super()._after_step()
        counted = [0] * len(self.fetchers)
        for member in self.members.values():
            if not member.running:
                assert not member.fetching, f"{member.name} is down but fetches"
            for pid in member.fetching:
                counted[pid] += 1
                assert self.catalog.is_live(pid)
                assert self.catalog.topic_partition(pid)[0] in member.topics or member.name in self.group
        assert counted == self.fetchers.tolist()


@st.composite
def share_timelines(draw):
    topics = draw_topics(draw)
    names = list(topics)
    members = {f"M{i}": {"topics": draw(st.lists(st.sampled_from(names), min_size=1, unique=True))}
               for i in range(draw(st.integers(1, 5)))}
    interval = draw(st.sampled_from([1, 2, 5]))
    events = draw_events(draw, topics, members, gaps=[0, 0.3, 1, 2.5, 4, 9, 30], downs=[0.5, 3, 40], recreate=True)
    return {"group_type": "share", "topics": topics, "members": members, "events": events,
            "settings": {"heartbeat_interval": interval, "session_timeout": interval * draw(st.sampled_from([2, 5])),
                         "initialize_seconds": draw(st.sampled_from([0, 0.5, 3]))}}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=share_timelines(), kafka_version=st.sampled_from(["4.2", "4.3"]))
def test_once_settled_every_initialized_subscribed_partition_is_fetched(doc, kafka_version):
    engine = Checked(parse_share_timeline(doc), kafka_version)
    run = engine.run()
    assert engine.settled()
    catalog = engine.catalog
    subscribed = {t for m in engine.group.values() for t in m.c_topics}
    expected = {pid for t in subscribed for pid in catalog.pids_of(t)}
    assert expected <= engine.initialized  # once settled, every subscribed partition's share state exists
    fetched = set()
    for name, member in engine.members.items():
        if name in engine.group:
            assert member.running and member.c_epoch == engine.assignment_epoch
            live = {pid for t in member.c_topics for pid in catalog.pids_of(t)}
            assert member.fetching == engine.target.get(name, frozenset()) & live
            fetched |= member.fetching
        else:
            assert not member.fetching
    assert fetched == expected  # every initialised partition someone subscribes to has at least one member
    for record in run.records:
        assert record.unfetched_partition_seconds >= 0 and record.stopped >= 0 and record.started >= 0
        assert record.lost >= record.orphaned >= 0 and record.heartbeats >= 0
        assert sum(record.sharing.values()) == len(record.holders)
