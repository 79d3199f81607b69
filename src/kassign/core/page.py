"""report.html pages: one self-contained file, interactive, that opens without network.

Both reports (``kassign pipeline``'s and ``kassign simulate``'s) are built from these parts:

- charts are Plotly figures (plain dicts: ``{"data": [...], "layout": {...}}``) drawn in the browser by
  plotly.js. The script is the one the ``plotly`` wheel ships (``plotly.offline.get_plotlyjs()``), embedded
  in the page gzip-compressed and base64-encoded (4.8 MB of script become 2 MB of page), and unpacked by
  the browser's own ``DecompressionStream`` when the page opens: no file beside it, no network;
- every number a reader sees is written in Python with ``kassign.core.units`` (tooltips too), so a tooltip
  reads exactly as the tables do;
- tables sort by a click on a column's header (numbers biggest first, then the other way round); a
  long table shows its first rows and sums up the rest in a footer row that never sorts away.

When the charts are drawn the page's root element gets ``data-charts="ready"`` (``"failed"`` or
``"unsupported"`` otherwise, with a sentence in each chart's place), which the browser tests wait for.
"""

from __future__ import annotations

import base64
import functools
import gzip
import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from kassign.core.units import Figure, count, human_bytes

_UNITS = (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024), ("B", 1))

# Blues from nearly white (little) to dark (much): a heat map reads "the darker, the more".
HEAT = [[0.0, "#f4f8fd"], [0.25, "#c6dbef"], [0.5, "#6baed6"], [0.75, "#2171b5"], [1.0, "#08306b"]]
NOT_THERE = "#d4d4d4"  # a heat map's background: a cell with no value (not in the group, no such partition)
COLORS = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974",
          "#64b5cd"]


def byte_unit(values: Sequence[float]) -> tuple[str, float]:
    """The binary unit that fits the largest value (at least 1 of it), and its size in bytes."""
    top = max((abs(v) for v in values), default=0)
    for name, size in _UNITS:
        if top >= size:
            return name, size
    return "B", 1


def exact_bytes(value: float) -> str:
    """``430.4 KiB (440,685 B)``: the readable figure and the exact one."""
    shown = human_bytes(value)
    return shown if shown.endswith(" B") else f"{shown} ({count(value)} B)"


def many(n: float, thing: str) -> str:
    """``1 partition``, ``3 partitions``, ``1,024 records``."""
    return f"{count(n)} {thing}" + ("" if n == 1 else "s")


def natural(name: str) -> tuple:
    """Sort key that puts ``consumer-2`` before ``consumer-10``."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", str(name)))


def text(value: Any) -> str:
    """A name from a user's data as tooltip text: no terminal controls, no markup (Plotly reads a few tags)."""
    from kassign.core.text import printable

    return html.escape(printable(value), quote=False)


def hover(*lines: str) -> str:
    """Tooltip lines (already escaped with ``text`` where they hold names), the first one bold."""
    first, *rest = lines
    return "<br>".join([f"<b>{first}</b>", *rest])


@functools.lru_cache(maxsize=1)
def _plotly_js_packed() -> str:
    from plotly.offline import get_plotlyjs

    return base64.b64encode(gzip.compress(get_plotlyjs().encode("utf-8"), 6, mtime=0)).decode("ascii")


def _json(value: Any) -> str:
    """JSON safe inside a ``<script>`` element (no ``</script>``, no ``<!--``)."""
    raw = json.dumps(value, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return raw.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _clean(value: Any) -> Any:
    """Floats rounded to 6 significant digits (a chart shows no more; the page stays small); NaN, inf -> null."""
    if isinstance(value, float):
        return float(f"{value:.6g}") if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def chart(name: str, figure: Mapping[str, Any], caption: str | None = None, height: int = 380) -> str:
    """A chart's place on the page: its ``<div>`` (``data-name=name``), its figure as JSON, its caption."""
    layout = {"height": height, "margin": {"l": 70, "r": 20, "t": 50, "b": 60}, "hovermode": "closest",
              "hoverlabel": {"align": "left"}, "colorway": COLORS,
              "font": {"family": "sans-serif", "size": 12}, "separators": ".,",
              **figure.get("layout", {})}
    block = {"data": _clean(list(figure["data"])), "layout": _clean(layout),
             "config": {"responsive": True, "displaylogo": False, "scrollZoom": False,
                        "toImageButtonOptions": {"filename": name}}}
    ident = f"chart-{html.escape(name)}"
    caption_html = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return (f'<figure class=chart><div class=kchart id="{ident}" data-name="{html.escape(name)}" '
            f'style="min-height:{height}px"><p class=fallback>The chart is drawn when the page opens '
            f'(this needs JavaScript).</p></div><script type="application/json" data-chart="{ident}">'
            f"{_json(block)}</script>{caption_html}</figure>")


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]], caption: str | None = None,
          title: str | None = None, rest: Sequence[Any] | None = None,
          row_classes: Sequence[str | None] | None = None) -> str:
    """A sortable table, ``html_table``'s twin: cells escaped, figures right-aligned (class ``num``).
    ``rest``: a footer row summing up what the table leaves out; it stays last whatever the order.
    ``row_classes``: a class for each body row (``None``: none)."""
    from kassign.core.text import printable

    def cell(value: Any) -> str:
        numeric = isinstance(value, (int, float, Figure)) and not isinstance(value, bool)
        shown = printable(value)
        kind = " class=num" if numeric else (" class=nw" if len(shown) <= 32 else "")
        return f"<td{kind}>{html.escape(shown)}</td>"

    def kind(i: int) -> str:
        values = [row[i] for row in rows if i < len(row) and str(row[i]) not in ("-", "")]
        numeric = bool(values) and all(isinstance(v, (int, float, Figure)) and not isinstance(v, bool)
                                       for v in values)
        return "num" if numeric else "text"

    head = "".join(f"<th data-type={kind(i)}><button type=button>{html.escape(c)}</button></th>"
                   for i, c in enumerate(columns))
    classes = list(row_classes or []) + [None] * (len(rows) - len(row_classes or []))
    body = "".join((f"<tr class={html.escape(k)}>" if k else "<tr>") + "".join(cell(c) for c in row) + "</tr>"
                   for row, k in zip(rows, classes))
    foot = f"<tfoot><tr class=rest>{''.join(cell(c) for c in rest)}</tr></tfoot>" if rest else ""
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    heading = f"<h3>{html.escape(title)}</h3>" if title else ""
    return (f"{heading}<div class=tablewrap><table class=sortable>{cap}<thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody>{foot}</table></div>")


_STYLE = """
body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
h1{margin-bottom:.2em}.meta{color:#555;margin-top:0}
table{border-collapse:collapse;margin:.5em 0 1em}
caption{caption-side:bottom;text-align:left;font-size:.85em;color:#555;padding-top:.3em}
td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}td{overflow-wrap:anywhere}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}td.nw{white-space:nowrap}
th{background:#f3f3f3;padding:0}
th button{all:unset;display:block;box-sizing:border-box;width:100%;padding:2px 18px 2px 8px;cursor:pointer;
  position:relative;font-weight:bold}
th button:focus-visible{outline:2px solid #4c72b0}
th button::after{content:"\\2195";position:absolute;right:4px;color:#aaa;font-weight:normal}
th[aria-sort=ascending] button::after{content:"\\25B2";color:#333}
th[aria-sort=descending] button::after{content:"\\25BC";color:#333}
th[data-type=num] button{text-align:right}
tfoot tr.rest td{background:#f7f7f7;font-style:italic;border-top:2px solid #bbb}
.tablewrap{overflow-x:auto}
figure{margin:1em 0}figure.chart{border:1px solid #eee;padding:.3em}
figcaption{font-size:.9em;color:#444;max-width:60em;margin-top:.3em}
.kchart .fallback{color:#a00;padding:1em}
.verdict{background:#eef5ee;border-left:4px solid #4a8a4a;padding:.2em 1em}
.warnings{background:#fff4e0;border-left:4px solid #d08a00;padding:.2em 1em}
tr.refused td{background:#fde8e8}dt{font-weight:bold;margin-top:.4em}
.hint{font-size:.85em;color:#666}
"""

_SCRIPT = r"""
(function () {
  "use strict";
  var root = document.documentElement;
  // sortable tables: a click on a header sorts the body by that column (numbers biggest first)
  var factors = {B: 1, KiB: 1024, MiB: 1048576, GiB: 1073741824, TiB: 1099511627776};
  function key(cell, numeric) {
    var t = cell ? cell.textContent.trim() : "";
    if (!numeric) return t.toLowerCase();
    var m = t.replace(/,/g, "").match(/^(-?\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB)?/);
    return m ? parseFloat(m[1]) * (factors[m[2]] || 1) : null;
  }
  function sortBy(th) {
    var table = th.closest("table"), body = table.tBodies[0], index = th.cellIndex;
    var numeric = th.dataset.type === "num";
    var descending = th.getAttribute("aria-sort") ? th.getAttribute("aria-sort") === "ascending" : numeric;
    var rows = Array.prototype.slice.call(body.rows).map(function (row) {
      return {row: row, key: key(row.cells[index], numeric)};
    });
    rows.sort(function (a, b) {
      if (a.key === b.key) return 0;
      if (a.key === null || a.key === "") return 1;   // "-" and blanks last either way
      if (b.key === null || b.key === "") return -1;
      var order = a.key < b.key ? -1 : 1;
      return descending ? -order : order;
    });
    rows.forEach(function (r) { body.appendChild(r.row); });
    Array.prototype.forEach.call(th.parentNode.cells, function (other) { other.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
  }
  document.addEventListener("click", function (event) {
    var th = event.target.closest && event.target.closest("table.sortable thead th");
    if (th) sortBy(th);
  });

  // charts: unpack the embedded plotly.js, then draw every figure
  var blocks = document.querySelectorAll("script[data-chart]");
  function say(message) {
    blocks.forEach(function (b) {
      var div = document.getElementById(b.dataset.chart);
      if (!div) return;
      var p = document.createElement("p");
      p.className = "fallback";
      p.textContent = message;
      div.replaceChildren(p);
    });
  }
  if (!blocks.length) { root.dataset.charts = "ready"; return; }
  if (typeof DecompressionStream === "undefined") {
    root.dataset.charts = "unsupported";
    say("This browser cannot draw the charts (it needs DecompressionStream: Chrome 80, Firefox 113, "
        + "Safari 16.4 or newer). The tables hold the same figures.");
    return;
  }
  function unpack() {
    var packed = atob(document.getElementById("plotly-js").textContent.trim());
    var bytes = new Uint8Array(packed.length);
    for (var i = 0; i < packed.length; i++) bytes[i] = packed.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(function (code) {
      var script = document.createElement("script");
      script.textContent = code;
      document.head.appendChild(script);
      if (!window.Plotly) throw new Error("plotly.js did not load");
    });
  }
  function draw() {
    return Promise.all(Array.prototype.map.call(blocks, function (b) {
      var figure = JSON.parse(b.textContent), div = document.getElementById(b.dataset.chart);
      div.textContent = "";
      return window.Plotly.newPlot(div, figure.data, figure.layout, figure.config);
    }));
  }
  unpack().then(draw).then(function () { root.dataset.charts = "ready"; }, function (error) {
    root.dataset.charts = "failed";
    say("The charts could not be drawn: " + error);
    console.error(error);
  });
})();
"""


def page(title: str, body: str) -> str:
    """The whole document: ``body`` with the style, the table sorter and, if it holds charts, plotly.js."""
    charts = "data-chart=" in body
    bundle = (f'<script type="application/octet-stream" id="plotly-js">{_plotly_js_packed()}</script>'
              if charts else "")
    return (f"<!DOCTYPE html><html lang=en><head><meta charset='utf-8'>"
            f"<meta name=viewport content='width=device-width,initial-scale=1'><title>{html.escape(title)}</title>"
            f"<style>{_STYLE}</style></head><body>{body}{bundle}<script>{_SCRIPT}</script></body></html>")
