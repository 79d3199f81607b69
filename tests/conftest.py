"""Shared fixtures: where Kafka's reference vectors live, and how to read them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
VECTORS = REPO.parent / "shared" / "vectors"


def load_vectors(name: str) -> list[dict]:
    """Every line of ``../shared/vectors/<name>``; skips the test when the folder is absent."""
    path = VECTORS / name
    if not path.exists():
        pytest.skip(f"reference vectors not found at {path} (they ship beside the checkout in CI as shared/vectors/)")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def vector_params(name: str, where: Callable[[dict], bool] | None = None) -> list:
    """``pytest.param`` per vector line (only those ``where`` accepts, ids keep the file's line
    numbers), or one skipped param when the vectors are absent."""
    path = VECTORS / name
    if not path.exists():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"reference vectors not found at {path}"))]
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [pytest.param(line, id=f"line{i + 1}") for i, line in enumerate(lines) if where is None or where(line)]
