"""Charts for results people would rather see than read: per-member and per-broker load.

matplotlib runs headless (Agg); every function writes one PNG and returns its path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from kassign.core.errors import KassignError


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _integer_ticks():
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(integer=True)


PLOT_FORMATS = ("png", "svg", "pdf", "jpg", "jpeg", "webp")


def check_plot_path(path: str | Path) -> None:
    """Refuse, before any work, a plot file whose extension names no format kassign writes."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in PLOT_FORMATS:
        raise KassignError(f"--plot {str(path)!r}: name a .{', .'.join(PLOT_FORMATS)} file "
                           f"(the extension picks the format)")
    target = Path(path)
    if target.is_dir():
        raise KassignError(f"--plot {str(path)!r} is a directory; name a file such as {target / 'plot.png'}")


def save_figure(fig, path: str | Path) -> Path:
    """Write ``fig`` (creating parent folders), close it; a path that cannot be written is a KassignError."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(target, dpi=110, bbox_inches="tight")
    except OSError as err:
        raise KassignError(f"cannot write plot {str(target)!r}: {err.strerror or err}") from None
    finally:
        _pyplot().close(fig)
    return target


def assignment_chart(assignment: Mapping[str, Sequence[tuple[str, int]]], path: str | Path, title: str) -> Path:
    """Horizontal bars: partitions per member, stacked by topic."""
    plt = _pyplot()
    members = list(assignment)
    topics = sorted({t for parts in assignment.values() for t, _ in parts})
    per_member = {m: Counter(t for t, _ in parts) for m, parts in assignment.items()}
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.35 * len(members) + 1.2)))
    left = [0] * len(members)
    colours = plt.get_cmap("tab20")
    for i, topic in enumerate(topics):
        widths = [per_member[m][topic] for m in members]
        ax.barh(members, widths, left=left, label=topic, color=colours(i % 20))
        left = [a + b for a, b in zip(left, widths)]
    counts = [len(assignment[m]) for m in members]
    spread = max(counts) - min(counts) if counts else 0
    ax.set_xlabel("partitions")
    ax.xaxis.set_major_locator(_integer_ticks())
    ax.set_title(f"{title} (spread max-min = {spread})")
    ax.invert_yaxis()
    if 0 < len(topics) <= 20:
        ax.legend(title="topic", fontsize="small", loc="lower right")
    return save_figure(fig, path)


def replica_chart(
    placement: Mapping[int, Sequence[int]],
    broker_racks: Mapping[int, str | None],
    path: str | Path,
    fenced: Collection[int] = (),
) -> Path:
    """Per broker: leaders (first replicas) and followers, grouped by rack; fenced brokers are marked."""
    plt = _pyplot()
    leaders = Counter(replicas[0] for replicas in placement.values() if replicas)
    followers = Counter(b for replicas in placement.values() for b in replicas[1:])
    brokers = sorted(broker_racks, key=lambda b: (broker_racks[b] or "", b))
    labels = [f"{b}\n{broker_racks[b]}" if broker_racks[b] else str(b) for b in brokers]
    labels = [f"{label}\n(fenced)" if b in fenced else label for b, label in zip(brokers, labels)]
    fig, ax = plt.subplots(figsize=(max(5, 0.6 * len(brokers) + 2), 4))
    lead = [leaders[b] for b in brokers]
    ax.bar(labels, lead, label="leader (first replica)", color="#d62728")
    ax.bar(labels, [followers[b] for b in brokers], bottom=lead, label="follower", color="#1f77b4")
    ax.set_ylabel("replicas")
    ax.yaxis.set_major_locator(_integer_ticks())
    ax.set_xlabel("broker (rack)")
    ax.set_title(f"replica placement: {len(placement)} partitions")
    ax.legend(fontsize="small")
    return save_figure(fig, path)
