"""The pipeline's report.html driven in a real browser (headless Chromium through Playwright).

Real pipeline runs make the pages: a small sample (12 partitions, 4 members, two producer clients), a
big one (1,000 partitions, a group of 200 members) and live topics on a tansu broker (forensics and
lag). The tests hover bars and heat-map cells and read the tooltips against the summary, click table
headers and read the order, drag over charts and read the axis ranges; any console error, uncaught
exception or request that would leave the machine fails them.
"""

from __future__ import annotations

import json

import pytest

from kassign.core.page import exact_bytes, many
from kassign.spark import report_html, tables
from kassign.spark.pipeline import PipelineOptions, run_pipeline
from kassign.core.units import count, human_bytes, percent
from tests.browser import chromium, open_report, parse_figure
from tests.groups.classic.clients.conftest import tansu  # noqa: F401  (the live fixture's broker)

LIMIT = 5 * 1024 * 1024  # a report stays under 5 MiB, plotly.js included


@pytest.fixture(scope="module")
def small(spark, tmp_path_factory):
    chromium()  # skips where no browser is installed, before Spark works for nothing
    out = tmp_path_factory.mktemp("small") / "out"
    summary = run_pipeline(spark, PipelineOptions(out=str(out), rows=20_000, keys=2_000, partitions=12, members=4,
                                                  producers=("java", "librdkafka:consistent_random"),
                                                  write_partitioned=False, write_sample=False))
    return summary, out / "report.html"


@pytest.fixture(scope="module")
def big(spark, tmp_path_factory):
    chromium()
    out = tmp_path_factory.mktemp("big") / "out"
    summary = run_pipeline(spark, PipelineOptions(out=str(out), rows=20_000, keys=5_000, partitions=1000, members=200,
                                                  write_partitioned=False, write_sample=False))
    return summary, out / "report.html"


def _rows(summary):
    return {(r["topic"], r["partition"]): r for r in summary["partition_load"]}


def test_small_report_hover_sort_zoom(small):
    summary, path = small
    assert path.stat().st_size < LIMIT
    with open_report(path) as report:
        page = report.page
        names = report.chart_names()
        assert names == ["partition-load", "sweep", "consumer-load", "broker-load", "producers"]
        assert report.invalid() == []

        # one bar per partition, in partition order; its tooltip has the summary's exact figures
        load = report.figure("partition-load")
        assert load["data"][0]["x"] == [f"events-{p}" for p in range(12)]
        rows = _rows(summary)
        hottest = max(rows.values(), key=lambda r: r["bytes"])
        for p in (hottest["partition"], 3):
            r = rows[("events", p)]
            tip = report.hover_bar("partition-load", 0, p)
            assert tip[0] == f"events-{p}"
            assert f"bytes {exact_bytes(r['bytes'])}" in tip and f"records {count(r['records'])}" in tip
            assert f"keys {count(r['distinct_keys'])}" in tip
            assert r["hot_keys"][0]["key"] in tip[-1] and percent(r["hot_keys"][0]["share"]) in tip[-1]
        # the table of every partition: sorted by a click on a header, both ways
        hot = page.locator("h3:text-is('hot keys per partition') + .tablewrap table")
        assert len(report.column(hot, "partition")) == 12
        assert report.sort(hot, "records") == "descending"
        records = [parse_figure(c) for c in report.column(hot, "records")]
        assert records == sorted((r["records"] for r in rows.values()), reverse=True)
        assert report.sort(hot, "records") == "ascending"
        assert [parse_figure(c) for c in report.column(hot, "records")] == sorted(records)
        assert report.sort(hot, "partition") == "descending"
        assert [int(c) for c in report.column(hot, "partition")] == list(range(11, -1, -1))
        assert report.sort(hot, "partition") == "ascending"
        assert [int(c) for c in report.column(hot, "partition")] == list(range(12))
        # zoom: a drag over the sweep's plot narrows its x axis to what was dragged over
        before = report.figure("sweep")["xaxis"]["range"]
        report.drag("sweep", (0.2, 0.5), (0.5, 0.5))
        after = report.figure("sweep")["xaxis"]["range"]
        width = before[1] - before[0]
        assert after[0] == pytest.approx(before[0] + 0.2 * width, abs=0.02 * width)
        assert after[1] == pytest.approx(before[0] + 0.5 * width, abs=0.02 * width)
        page.locator('.kchart[data-name="sweep"] .nsewdrag').dblclick()  # and back
        page.wait_for_timeout(300)
        assert report.figure("sweep")["xaxis"]["range"] == pytest.approx(before)
        # consumer load: a bar per member and strategy
        strategies = list(summary["consumers"])
        member = summary["consumers"][strategies[1]]["members"]["consumer-2"]
        tip = report.hover_bar("consumer-load", 2, 1)
        assert tip[0] == f"{strategies[1]} · consumer-2" and f"bytes {exact_bytes(member['bytes'])}" in tip
        # the verdict as the terminal says it, header figures in human units
        verdict = page.locator(".verdict li").all_text_contents()
        assert verdict == tables.verdict_lines(summary)
        assert verdict[-1].startswith("biggest skew: topic events")
        assert "rows 20,000" in page.locator(".meta").text_content()
        report.assert_clean()


def test_big_topic_and_group_stay_readable(big):
    """1,000 partitions and 200 members: the hottest partitions as bars with one for the rest, every partition
    in a heat map, the group as a strategy x member heat map, long tables cut with their rest summed up."""
    summary, path = big
    assert path.stat().st_size < LIMIT
    rows = summary["partition_load"]
    assert summary["partitions"] == {"events": 1000}
    with open_report(path) as report:
        page = report.page
        load = report.figure("partition-load")
        bars = load["data"][0]
        assert len(bars["x"]) == report_html.TOP + 1 == report.chart("partition-load").locator(".point").count()
        by_bytes = sorted(rows, key=lambda r: (-r["bytes"], r["partition"]))
        assert bars["x"][:3] == [f"events-{r['partition']}" for r in by_bytes[:3]]
        others = 1000 - report_html.TOP
        assert bars["x"][-1] == f"the other {others:,}"
        tip = report.hover_bar("partition-load", 0, report_html.TOP)
        rest = sum(r["bytes"] for r in by_bytes[report_html.TOP:])
        assert tip[0] == f"the other {others:,} partitions"
        assert tip[1] == f"bytes {exact_bytes(rest)} in all, {human_bytes(rest / others)} each on average (the bar)"
        tip = report.hover_bar("partition-load", 0, 0)
        assert tip[0] == f"events-{by_bytes[0]['partition']}" and f"bytes {exact_bytes(by_bytes[0]['bytes'])}" in tip

        # every partition is a cell of the heat map, 50 to a row; empty partitions are cells too
        heat = report.figure("partition-heatmap")["data"][0]
        assert len(heat["z"]) == 20 and all(len(row) == 50 for row in heat["z"])
        cell = next(r for r in rows if r["partition"] == 537)
        tip = report.hover_cell("partition-heatmap", 10, 37)
        assert tip[0] == "events-537" and f"records {count(cell['records'])}" in tip
        before = report.figure("partition-heatmap")["xaxis"]["range"]
        report.drag("partition-heatmap", (0.1, 0.1), (0.4, 0.4))
        zoomed = report.figure("partition-heatmap")
        assert zoomed["xaxis"]["range"][1] - zoomed["xaxis"]["range"][0] < 0.5 * (before[1] - before[0])

        # the group: one heat map row per strategy, one column per member
        group = report.figure("consumer-load")["data"][0]
        assert group["type"] == "heatmap" and len(group["x"]) == 200 and group["y"] == list(summary["consumers"])
        assert group["x"][:3] == ["consumer-0", "consumer-1", "consumer-2"]  # in natural order
        strategy = group["y"][2]
        member = summary["consumers"][strategy]["members"]["consumer-150"]
        tip = report.hover_cell("consumer-load", 2, 150)
        assert tip[0] == f"{strategy} · consumer-150" and f"bytes {exact_bytes(member['bytes'])}" in tip
        assert f"{many(member['partitions'], 'partition')}, {many(member['records'], 'record')}" in tip
        report.page.evaluate("""() => Plotly.relayout(document.querySelector('.kchart[data-name="consumer-load"]'),
                                                       {'xaxis.range': [99.5, 119.5]})""")
        assert report.figure("consumer-load")["xaxis"]["range"] == [99.5, 119.5]

        # the hottest partitions' table: 50 rows, the other 923 summed up in a footer that never sorts away
        hot = page.locator("h3:text-matches('^hottest partitions') + .tablewrap table")
        assert hot.locator("tbody tr").count() == report_html.TABLE_ROWS
        footer = hot.locator("tfoot tr.rest td").all_text_contents()
        rest_rows = by_bytes[report_html.TABLE_ROWS:]
        assert footer[0] == f"the other {len(rest_rows):,} partitions"
        assert footer[2] == count(sum(r["records"] for r in rest_rows))
        assert footer[3] == human_bytes(sum(r["bytes"] for r in rest_rows))
        assert report.sort(hot, "partition") == "descending"
        shown = [int(c) for c in report.column(hot, "partition")]
        assert shown == sorted((r["partition"] for r in by_bytes[:report_html.TABLE_ROWS]), reverse=True)
        assert hot.locator("tbody tr").last.locator("td").first.text_content() == "events"
        assert hot.locator("tfoot tr").count() == 1
        report.assert_clean()
    page_text = path.read_text()
    assert "1,000 partitions" in page_text and "rows 20,000" in page_text
    json.loads(page_text.split('data-chart="chart-partition-load">')[1].split("</script>")[0])


@pytest.fixture(scope="module")
def live(request, spark, tmp_path_factory):
    """Live topics on a tansu broker: keyed records from a Java-partitioning client (kafka-python) and from
    librdkafka with its default CRC32 partitioner, a group that committed some offsets."""
    chromium()
    pytest.importorskip("confluent_kafka", reason="a librdkafka producer needs confluent-kafka")
    pytest.importorskip("kafka", reason="a Java-partitioning producer needs kafka-python")
    broker = request.getfixturevalue("tansu")  # after the skips above: starting a broker for nothing is slow
    from confluent_kafka import Consumer, Producer, TopicPartition
    from kafka import KafkaProducer

    topic = "report-live"
    broker.create_topic(topic, 4)
    java = KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=5)
    for i in range(240):
        java.send(topic, key=f"user-{i % 60}".encode(), value=b"v" * (i % 30))
    java.flush(30)
    java.close()
    rdkafka = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 5})  # partitioner: consistent_random
    for i in range(60):
        rdkafka.produce(topic, key=f"user-{i}".encode(), value=b"w" * 7)
    assert rdkafka.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "report-billing",
                         "enable.auto.commit": False})
    consumer.commit(offsets=[TopicPartition(topic, 0, 5), TopicPartition(topic, 2, 9)], asynchronous=False)
    consumer.close()
    out = tmp_path_factory.mktemp("live") / "out"
    summary = run_pipeline(spark, PipelineOptions(out=str(out), bootstrap=broker.bootstrap, topics=[topic],
                                                  group="report-billing", write_partitioned=False,
                                                  write_sample=False))
    return summary, out / "report.html"


def test_live_report_forensics_and_lag(live):
    summary, path = live
    assert path.stat().st_size < LIMIT
    topic = "report-live"
    with open_report(path) as report:
        page = report.page
        names = report.chart_names()
        assert names == ["forensics", "partition-load", "sweep", "consumer-load", "broker-load", "lag"]
        headings = page.locator("h2").all_text_contents()
        assert headings.index("Source") < headings.index("Which producer put the records there") < \
            headings.index("Rows") < headings.index("Consumer lag")
        # forensics: one stacked bar per topic, a segment per partitioner family; the tooltip names it
        forensics = summary["forensics"][topic]
        best = forensics["explanation"][0]
        keyed = forensics["keyed_records"]
        tip = report.hover_bar("forensics", 0, 0)
        assert tip[0].startswith(f"{topic} · java")
        share = percent(best["records"] / keyed)
        assert tip[1] == f"{count(best['records'])} keyed records ({share}) are where it puts them"
        assert "java" in tip[-1] and tip[-1].startswith("partitioners: ")
        second = forensics["explanation"][1]
        tip = report.hover_bar("forensics", 1, 0)
        assert tip[0].startswith(f"{topic} · librdkafka:consistent")
        assert tip[1].startswith(f"{count(second['gain'])} more keyed records ({percent(second['gain'] / keyed)})")
        # partition load measured beside Java's placement
        rows = _rows(summary)
        r = rows[(topic, 1)]
        tip = report.hover_bar("partition-load", 1, 1)
        assert tip[0] == f"{topic}-1" and f"records {count(r['records'])}" in tip
        assert f"under Java's partitioner: {exact_bytes(r['java_bytes'])}, {count(r['java_records'])} records" in tip
        # lag: member and records behind, as the summary has them
        strategies = [s for s, c in summary["consumers"].items() if "lag" in c]
        members = sorted(summary["consumers"][strategies[0]]["lag"]["members"])
        behind = summary["consumers"][strategies[3]]["lag"]["members"][members[2]]
        tip = report.hover_bar("lag", 2, 3)
        assert tip[0] == f"{strategies[3]} · {members[2]}" and tip[1] == f"{count(behind)} records behind"
        lag = page.locator("h3:text-matches('^consumer lag per partition') + .tablewrap table")
        assert report.sort(lag, "lag") == "descending"
        assert [parse_figure(c) for c in report.column(lag, "lag")] == sorted(summary["lag"][topic]["lag"],
                                                                             reverse=True)
        assert report.sort(lag, "committed") == "descending"
        assert report.column(lag, "committed") == ["9", "5", "-", "-"]  # nothing committed: last either way
        assert report.sort(lag, "committed") == "ascending"
        assert report.column(lag, "committed") == ["5", "9", "-", "-"]
        report.assert_clean()
