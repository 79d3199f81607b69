"""The verdict's sentences and the report's header, on summaries of the pipeline's shape (no Spark)."""

from __future__ import annotations

from kassign.spark.report_html import _describe
from kassign.spark.tables import verdict_lines
from kassign.core.units import human_bytes

MIB = 1024 * 1024


def _summary(best: str, joins: dict[str, int]) -> dict:
    return {"verdict": {"best_strategy": best, "best_strategy_max_over_mean": 1.01},
            "rebalance": {s: {"member_joins": {"bytes": b, "partitions": 3, "records": 10, "member": "joiner"},
                              "member_leaves": {"bytes": 1, "partitions": 1, "records": 1, "member": "c-3"}}
                          for s, b in joins.items()},
            "input": {}}


def test_the_best_balance_says_what_it_moves_when_a_sticky_assignor_moves_less():
    lines = verdict_lines(_summary("load-aware", {"load-aware": int(3.1 * MIB), "cooperative-sticky": MIB,
                                                  "range": 5 * MIB}))
    assert lines == ["load-aware balances this data best over the consumers: the busiest member gets 1.01× the mean "
                     "bytes, but moves 3.1 MiB when a member joins, where cooperative-sticky moves 1.0 MiB."]


def test_the_sticky_assignor_that_moves_least_is_named_cooperative_sticky_on_a_tie():
    joins = {"load-aware": 4 * MIB, "sticky": 2 * MIB, "cooperative-sticky": 3 * MIB}
    assert verdict_lines(_summary("load-aware", joins))[0].endswith(
        f"but moves {human_bytes(4 * MIB)} when a member joins, where sticky moves {human_bytes(2 * MIB)}.")
    joins["cooperative-sticky"] = 2 * MIB
    assert verdict_lines(_summary("load-aware", joins))[0].endswith("where cooperative-sticky moves 2.0 MiB.")


def test_nothing_to_weigh_says_nothing_more():
    plain = "the busiest member gets 1.01× the mean bytes."
    # moves no more than the sticky assignors
    assert verdict_lines(_summary("load-aware", {"load-aware": MIB, "sticky": MIB}))[0].endswith(plain)
    # no sticky assignor was run, or no rebalance figures at all
    assert verdict_lines(_summary("load-aware", {"load-aware": MIB, "range": 0}))[0].endswith(plain)
    assert verdict_lines({**_summary("load-aware", {}), "rebalance": {}})[0].endswith(plain)
    # the best is sticky itself: weighed against cooperative-sticky only
    line = verdict_lines(_summary("sticky", {"sticky": 2 * MIB, "cooperative-sticky": MIB}))[0]
    assert line.endswith("but moves 2.0 MiB when a member joins, where cooperative-sticky moves 1.0 MiB.")


def test_every_verdict_line_starts_alike():
    summary = _summary("range", {})
    summary["verdict"]["biggest_skew"] = {"topic": "orders", "hottest_share": 0.2, "skew": 2.4, "partitions": 12,
                                          "hottest_key_share": 0.05}
    assert verdict_lines(summary)[-1] == ("biggest skew: topic orders, whose hottest partition carries 20.0% of its "
                                          "bytes, 2.40× the mean of its 12 partitions (its hottest key alone: 5.0%).")


def test_the_header_reads_in_human_units():
    header = _describe({"kind": "sample", "rows": 3_000_000, "keys": 200_000, "null_share": 0.05, "seed": 12345,
                        "skew": 0.9})
    assert header == "kind sample, rows 3,000,000, keys 200,000, null share 5.0%, seed 12345, skew 0.90"
    assert _describe({"batch_size": 16384, "model": "sticky"}) == "batch size 16.0 KiB, model sticky"
    assert _describe({"kind": "kafka", "topics": ["a", "b"], "group": "g<1>"}) == \
        "kind kafka, topics a, b, group g&lt;1&gt;"
