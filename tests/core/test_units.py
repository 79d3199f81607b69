"""``kassign.core.units``: durations as people write them (``parse_duration``), read back to seconds."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kassign.core.errors import KassignError
from kassign.core.units import human_seconds, parse_duration


@pytest.mark.parametrize("text, seconds", [("30s", 30.0), ("1500ms", 1.5), ("2m", 120.0), ("1h", 3600.0),
                                           ("45", 45.0), (" 2.5 m ", 150.0), ("0", 0.0), (7, 7.0), (0.25, 0.25)])
def test_durations_read_as_seconds(text, seconds):
    assert parse_duration(text, "--patience") == seconds


@pytest.mark.parametrize("bad", ["soon", "-5", "5 min", "1e3s", "", True, -1, float("nan"), float("inf")])
def test_anything_else_is_one_line_naming_the_option(bad):
    with pytest.raises(KassignError) as err:
        parse_duration(bad, "--patience")
    assert str(err.value).startswith("--patience must be a duration") and "\n" not in str(err.value)


def test_the_error_class_is_the_callers():
    class WindowError(KassignError):
        pass

    with pytest.raises(WindowError):
        parse_duration("x", "--sample", WindowError)


@given(st.integers(min_value=0, max_value=10**6))
def test_whole_seconds_round_trip_through_every_unit(n):
    assert parse_duration(f"{n}s", "d") == n and parse_duration(f"{n}m", "d") == 60 * n
    assert parse_duration(f"{n * 1000}ms", "d") == pytest.approx(n)
    assert human_seconds(parse_duration(n, "d")) == human_seconds(n)
