"""Before/after chart of a plan: replicas and leaders per broker, beside Kafka's --generate."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kassign.core.charts import save_figure


def plan_chart(brokers: Sequence[Mapping[str, Any]], kafka: Sequence[Mapping[str, Any]] | None,
               path: str | Path, title: str) -> Path:
    """Two panels (replicas, leaders): per broker, now / kassign's plan / Kafka's --generate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    labels = [f"{b['broker']}\n{b['rack']}" if b.get("rack") else str(b["broker"]) for b in brokers]
    x = list(range(len(brokers)))
    series = [("now", "before", "#7f7f7f"), ("kassign plan", "after", "#1f77b4")]
    width = 0.8 / (len(series) + (1 if kafka else 0))
    fig, axes = plt.subplots(2, 1, figsize=(max(6, 0.35 * len(brokers) + 2), 6.5), sharex=True)
    for ax, kind in zip(axes, ("replicas", "leaders")):
        for k, (name, when, colour) in enumerate(series):
            ax.bar([i + (k - 0.5 * len(series)) * width + width / 2 for i in x],
                   [b[f"{kind}_{when}"] for b in brokers], width, label=name, color=colour)
        if kafka:
            by_id = {row["broker"]: row for row in kafka}
            ax.bar([i + (len(series) - 0.5 * len(series)) * width + width / 2 for i in x],
                   [by_id.get(b["broker"], {}).get(f"{kind}_after", 0) for b in brokers], width,
                   label="Kafka --generate", color="#ff7f0e")
        ax.set_ylabel(kind)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].legend(fontsize="small", ncol=3, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    axes[0].set_title(title, pad=22)
    axes[1].set_xticks(x)
    axes[1].set_xticklabels(labels, fontsize="x-small" if len(brokers) > 30 else "small")
    axes[1].set_xlabel("broker (rack)")
    return save_figure(fig, path)
