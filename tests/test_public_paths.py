"""What users import keeps its path: the short public homes (``kassign.assignors``, ``kassign.clients``), every
import the manual shows, and every module path the manual once showed before the tree was reorganised."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import kassign
from kassign.core.moved import MOVED, new_home

ROOT = Path(__file__).resolve().parent.parent
GROUP = {"topics": {"t0": 3, "t1": 2}, "members": {"C0": {"topics": ["t0", "t1"]}, "C1": {"topics": ["t0"]}}}


def test_a_users_assignor_subclasses_the_short_path(tmp_path, monkeypatch) -> None:
    # the manual's example, written as a user writes it, used through the API and the CLI
    (tmp_path / "mine.py").write_text(textwrap.dedent("""
        from kassign.assignors import AbstractPartitionAssignor, TopicPartition

        class FirstTakesAll(AbstractPartitionAssignor):
            name = "first-takes-all"

            def assign_partitions(self, partitions_per_topic, subscriptions, cluster):
                out = {m: [] for m in subscriptions}
                for topic, count in partitions_per_topic.items():
                    first = min(m for m, s in subscriptions.items() if topic in s.topics)
                    out[first] += [TopicPartition(topic, p) for p in range(count)]
                return out
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert kassign.assign("mine:FirstTakesAll", GROUP) == {
        "C0": [("t0", 0), ("t0", 1), ("t0", 2), ("t1", 0), ("t1", 1)], "C1": []}
    scenario = tmp_path / "group.json"
    scenario.write_text(__import__("json").dumps(GROUP))
    done = subprocess.run([sys.executable, "-m", "kassign.cli.main", "assign", "--json", "-s", "mine:FirstTakesAll",
                           str(scenario)], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert '"C1": []' in done.stdout


def test_the_short_paths_hold_the_very_same_classes() -> None:
    import kassign.assignors as public
    import kassign.groups.classic.assignors as home
    from kassign.groups.classic.assignors.eager_sticky import StickyAssignor
    from kassign.groups.classic.assignors.range import RangeAssignor

    for name in ("AbstractPartitionAssignor", "ConsumerPartitionAssignor", "TopicPartition", "Subscription",
                 "Assignment", "MemberInfo", "get_assignor", "register_assignor", "COOPERATIVE", "EAGER"):
        assert getattr(public, name) is getattr(home, name), name
    assert public.RangeAssignor is RangeAssignor and public.StickyAssignor is StickyAssignor
    assert set(public.__all__) <= set(dir(public))
    with pytest.raises(AttributeError):
        public.NoSuchAssignor  # noqa: B018


@pytest.mark.parametrize("client", ["kafka_python", "aiokafka"])
def test_the_consumer_adapters_short_path(client: str) -> None:
    pytest.importorskip({"kafka_python": "kafka", "aiokafka": "aiokafka"}[client])
    public = importlib.import_module(f"kassign.clients.{client}")
    home = importlib.import_module(f"kassign.groups.classic.clients.{client}")
    for name in public.__all__:
        assert getattr(public, name) is getattr(home, name), name
    assert set(public.__all__) == set(home.__all__)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_every_moved_module_answers_at_its_old_path_with_the_same_module(old: str) -> None:
    module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])
    assert sys.modules[old] is module


def test_submodules_of_a_moved_package_are_not_loaded_twice() -> None:
    old = importlib.import_module("kassign.simulate.engine")
    assert old is importlib.import_module("kassign.groups.simulate.engine")
    from kassign.simulate import parse_sim_scenario
    from kassign.groups.simulate import parse_sim_scenario as at_home
    assert parse_sim_scenario is at_home


def test_names_that_never_moved_are_left_alone() -> None:
    assert new_home("kassign.api") is None and new_home("kassign.assignors") is None
    assert new_home("kassign.simulated") is None  # a prefix of a name is not the name
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("kassign.no_such_module")


def _manual_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "docs").rglob("*.py"))]


def test_every_import_the_manual_shows_works() -> None:
    pattern = re.compile(r"^\s*from (kassign(?:\.\w+)*) import ([\w, ]+)", re.M)
    seen = 0
    for page in _manual_pages():
        for module, names in pattern.findall(page.read_text()):
            if module.split(".")[-1] in ("kafka_python", "aiokafka"):
                pytest.importorskip({"kafka_python": "kafka", "aiokafka": "aiokafka"}[module.split(".")[-1]])
            loaded = importlib.import_module(module)
            for name in (n.split(" as ")[0].strip() for n in names.split(",") if n.strip()):
                assert hasattr(loaded, name), f"{page.name}: from {module} import {name}"
            seen += 1
    assert seen >= 5


def test_the_manual_shows_the_short_paths_for_what_users_subclass_or_plug_in() -> None:
    text = "\n".join(page.read_text() for page in _manual_pages())
    assert "from kassign.assignors import AbstractPartitionAssignor" in text
    assert "from kassign.clients.kafka_python import" in text and "from kassign.clients.aiokafka import" in text
    assert "from kassign.groups.classic.assignors import" not in text
