"""The capacity document (``--capacity FILE``): a broker's entry over the default, every field optional, and every
malformed document refused in one line that names the place."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kassign.core.errors import KassignError
from kassign.replicas.capacity import FIELDS, BrokerCapacity, CapacityError, parse_capacity


def test_the_worked_example():
    cap = parse_capacity({"default": {"disk_bytes": 10**12, "max_replicas": 4000},
                          "brokers": {"3": {"disk_bytes": 5 * 10**11, "network_in_bytes_per_s": 125_000_000}}})
    assert cap.for_broker(3) == BrokerCapacity(5 * 10**11, 125_000_000, None, 4000)
    assert cap.for_broker(1) == BrokerCapacity(10**12, None, None, 4000)
    assert cap.resolve([2, 1]) == {1: cap.for_broker(1), 2: cap.for_broker(2)}
    assert cap.source == "a dict"
    assert cap.to_json() == {"default": {"disk_bytes": 10**12, "max_replicas": 4000},
                             "brokers": {"3": {"disk_bytes": 5 * 10**11, "network_in_bytes_per_s": 125_000_000}}}


def test_empty_and_null_mean_nothing_given():
    assert parse_capacity({}).for_broker(0) == BrokerCapacity()
    assert parse_capacity({"default": None, "brokers": None}).brokers == {}
    assert parse_capacity({"default": {"disk_bytes": None}}).default == BrokerCapacity()


def test_a_file(tmp_path):
    path = tmp_path / "cap.json"
    path.write_text(json.dumps({"brokers": {"1": {"max_replicas": 10}}}))
    cap = parse_capacity(path, brokers=[1, 2])
    assert cap.source == str(path) and cap.for_broker(1).max_replicas == 10


@pytest.mark.parametrize("document, message", [
    ({"defaults": {}}, r"^capacity: unknown field defaults \(a capacity document has default and brokers\)$"),
    ({"default": {"disk": 1}}, r"^capacity: default: unknown field disk \(a capacity entry has disk_bytes, "),
    ({"default": {"disk_bytes": 0}}, r"^capacity: default\.disk_bytes must be a positive whole number"),
    ({"default": {"disk_bytes": -5}}, r"must be a positive whole number up to 9223372036854775807, got -5$"),
    ({"default": {"disk_bytes": 1e12}}, r"got 1000000000000\.0 \(write 1000000000000, not 1000000000000\.0\)$"),
    ({"default": {"disk_bytes": "1TB"}}, r"disk_bytes must be a positive whole number .* got \"1TB\"$"),
    ({"default": {"disk_bytes": True}}, r"disk_bytes must be a positive whole number"),
    ({"default": {"max_replicas": 2**31}}, r"max_replicas must be a positive whole number up to 2147483647"),
    ({"default": {"disk_bytes": 2**63}}, r"disk_bytes must be a positive whole number up to"),
    ({"default": []}, r"^capacity: default must be an object of disk_bytes, "),
    ({"brokers": []}, r"^capacity: brokers must be an object of broker id -> entry, got \[\]$"),
    ({"brokers": {"b1": {}}}, r"^capacity: brokers: broker id \"b1\" is not a whole number$"),
    ({"brokers": {"-1": {}}}, r"broker id \"-1\" is not a whole number$"),
    ({"brokers": {"3000000000": {}}}, r"broker id 3000000000 is out of range"),
    ({"brokers": {"1": {"max_replicas": 1.5}}}, r"^capacity: brokers\.1\.max_replicas must be a positive whole"),
    ({"brokers": {"1": {}, "01": {}}}, r"^capacity: broker 1 is given twice$"),
    ([1, 2], r"^capacity must be a document \(dict\) or the path of its JSON file, got list$"),
])
def test_malformed_documents_are_one_line(document, message):
    with pytest.raises(CapacityError, match=message) as err:
        parse_capacity(document)
    assert "\n" not in str(err.value)


def test_not_a_document():
    with pytest.raises(CapacityError, match="got int"):
        parse_capacity(5)  # type: ignore[arg-type]


def test_unknown_broker_ids_are_named():
    with pytest.raises(CapacityError, match=r"^capacity: unknown broker ids 7, 9 \(the cluster's brokers: 1, 2, 3\)$"):
        parse_capacity({"brokers": {"7": {}, "9": {}, "2": {}}}, brokers=[3, 1, 2])


@pytest.mark.parametrize("text, message", [
    ("{", r"^capacity file '.*' is not valid JSON: "),
    ('{"default": {}, "default": {}}', r"key \"default\" appears twice in one object"),
    ("[]", r"^capacity file '.*' must be a JSON object"),
])
def test_malformed_files(tmp_path, text, message):
    path = tmp_path / "cap.json"
    path.write_text(text)
    with pytest.raises(CapacityError, match=message):
        parse_capacity(str(path))


def test_missing_file(tmp_path):
    with pytest.raises(KassignError, match=r"^cannot read capacity file '.*nope\.json': No such file"):
        parse_capacity(str(tmp_path / "nope.json"))


entries = st.fixed_dictionaries({}, optional={f: st.integers(1, 2**31 - 1) for f in FIELDS})


@settings(max_examples=50, deadline=None)
@given(entries, st.dictionaries(st.integers(0, 50), entries, max_size=5), st.integers(0, 50))
def test_a_brokers_entry_overrides_the_default_field_by_field(default, brokers, broker):
    cap = parse_capacity({"default": default, "brokers": {str(b): e for b, e in brokers.items()}})
    own = brokers.get(broker, {})
    assert cap.for_broker(broker).to_json() == {**default, **own}
    assert parse_capacity(cap.to_json()) == cap


def test_the_reference_names_every_field():
    from tests.docs.reference import fields

    named = set(fields("formats.md", "Capacity documents"))
    assert {p[1] for p in named if p[0] == "default"} == set(FIELDS)
    assert {p for p in named if p[0] != "default"} == {("brokers", "BROKER")}
