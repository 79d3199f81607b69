"""Open a kassign HTML report in a real headless Chromium, driven by Playwright.

Tests that use this skip where no Chromium is installed (a user's clone); CI installs Debian's
package. Playwright's own browser downloads are never used: it launches the system Chromium
(``executable_path``), offline, with every request that would leave the machine refused and
recorded. A page is *broken* when the browser cannot show it: a console error or an uncaught
exception, a request for anything outside the file, an image that does not decode, a chart
that was not drawn, an empty or blank screen.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic", "--hide-scrollbars",
        "--disable-extensions", "--disable-default-apps", "--mute-audio"]


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium installed (CI installs Debian's chromium package)")


@dataclass
class Report:
    """An open report: the Playwright ``page``, and what went wrong while it was open."""

    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def assert_clean(self) -> None:
        assert not self.errors, f"the page logged errors: {self.errors}"
        assert not self.requests, f"the page asked the network for: {self.requests}"

    def invalid(self) -> list:
        """What ``Plotly.validate`` finds wrong in the figures as the page wrote them (attributes Plotly does not
        know, values of the wrong kind): nothing, for a good page."""
        return self.page.evaluate(
            """() => [...document.querySelectorAll('script[data-chart]')].flatMap(b => {
                 const figure = JSON.parse(b.textContent);
                 return (Plotly.validate(figure.data, figure.layout) || []).map(e => b.dataset.chart + ': ' + e.msg);
               })""")

    def chart(self, name: str) -> Any:
        """The ``<div>`` Plotly drew the chart ``name`` into."""
        return self.page.locator(f'.kchart[data-name="{name}"]')

    def figure(self, name: str) -> dict:
        """The chart's figure as Plotly holds it now (data, and the full layout with its current ranges)."""
        return self.page.evaluate(
            """name => { const d = document.querySelector(`.kchart[data-name="${name}"]`);
                        const axis = a => a ? {range: a.range.slice(), autorange: a.autorange, type: a.type} : null;
                        return {data: d.data.map(t => ({type: t.type, name: t.name, x: t.x, y: t.y, z: t.z,
                                                         hovertext: t.hovertext})),
                                xaxis: axis(d._fullLayout.xaxis), yaxis: axis(d._fullLayout.yaxis)}; }""", name)

    def chart_names(self) -> list[str]:
        """The page's charts, by name, in page order."""
        return self.page.eval_on_selector_all(".kchart", "ds => ds.map(d => d.dataset.name)")

    def hover_bar(self, name: str, trace: int, point: int) -> list[str]:
        """Move the mouse onto the middle of bar ``point`` of trace ``trace`` and return the tooltip's lines."""
        self.chart(name).scroll_into_view_if_needed()
        bar = self.chart(name).locator(".barlayer .trace").nth(trace).locator(".point").nth(point)
        box = bar.bounding_box()
        return self._tooltip(name, box["x"] + box["width"] / 2, box["y"] + max(box["height"] / 2, 0))

    def hover_cell(self, name: str, row: int, column: int, trace: int = 0) -> list[str]:
        """Move the mouse onto the middle of a heat map's cell and return the tooltip's lines."""
        self.chart(name).scroll_into_view_if_needed()
        point = self.page.evaluate(
            """([name, trace, row, column]) => {
                 const d = document.querySelector(`.kchart[data-name="${name}"]`), t = d.data[trace];
                 const fl = d._fullLayout, plot = d.querySelector('.nsewdrag').getBoundingClientRect();
                 const x = t.x ? t.x[column] : column, y = t.y ? t.y[row] : row;
                 return {x: plot.left + fl.xaxis.d2p(x), y: plot.top + fl.yaxis.d2p(y)};
               }""", [name, trace, row, column])
        return self._tooltip(name, point["x"], point["y"])

    def _tooltip(self, name: str, x: float, y: float) -> list[str]:
        tips = self.page.locator(".hoverlayer .hovertext")
        self.page.mouse.move(0, 0)  # off every chart: the last tooltip goes
        tips.first.wait_for(state="detached", timeout=5000) if tips.count() else None
        self.page.mouse.move(x, y)
        tip = self.chart(name).locator(".hoverlayer .hovertext").first
        tip.wait_for(state="visible", timeout=5000)
        lines = tip.evaluate("g => [...g.querySelectorAll('text.nums tspan.line')].map(t => t.textContent)")
        return lines if lines else tip.text_content().split("\n")

    def drag(self, name: str, start: tuple[float, float], end: tuple[float, float]) -> None:
        """A mouse drag over the chart's plot area, from and to fractions of its width and height."""
        self.chart(name).scroll_into_view_if_needed()
        box = self.chart(name).locator(".nsewdrag").first.bounding_box()
        mouse = self.page.mouse
        mouse.move(box["x"] + start[0] * box["width"], box["y"] + start[1] * box["height"])
        mouse.down()
        for step in range(1, 11):
            f = step / 10
            mouse.move(box["x"] + (start[0] + f * (end[0] - start[0])) * box["width"],
                       box["y"] + (start[1] + f * (end[1] - start[1])) * box["height"])
        mouse.up()
        self.page.wait_for_timeout(300)

    def sort(self, table: Any, header: str) -> str:
        """Click ``table``'s column header ``header``; return the order it now says (``aria-sort``)."""
        th = table.locator(f"thead th:has(button:text-is({header!r}))")
        th.click()
        return th.get_attribute("aria-sort")

    def column(self, table: Any, header: str) -> list[str]:
        """The body cells of ``table``'s column ``header``, top to bottom, as shown."""
        index = table.locator("thead th").evaluate_all(
            "(ths, h) => ths.findIndex(th => th.textContent.trim() === h)", header)
        assert index >= 0, f"no column {header!r}"
        return table.locator("tbody tr").evaluate_all(
            "(rows, i) => rows.map(r => r.cells[i].textContent.trim())", index)


@contextmanager
def open_report(path: Path, width: int = 1400, height: int = 1000, charts: str = "ready",
                init_script: str | None = None) -> Iterator[Report]:
    """``path`` open in headless Chromium (file:// URL), its charts in state ``charts`` (drawn, by default);
    errors collected. ``init_script`` runs in the page before its own scripts."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=ARGS)
        try:
            context = browser.new_context(viewport={"width": width, "height": height}, offline=True,
                                          service_workers="block")
            page = context.new_page()
            report = Report(page)

            def refuse(route: Any) -> None:
                url = route.request.url
                if url.startswith(("file:", "data:", "blob:")):
                    route.continue_()
                else:
                    report.requests.append(url)
                    route.abort()

            context.route("**/*", refuse)
            if init_script:
                context.add_init_script(init_script)
            page.on("console", lambda m: report.errors.append(f"console: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: report.errors.append(f"page error: {e}"))
            page.on("requestfailed", lambda r: None if r.url in report.requests
                    else report.errors.append(f"request failed: {r.url[:100]}"))
            page.goto(Path(path).resolve().as_uri(), wait_until="load")
            page.wait_for_function("document.documentElement.dataset.charts !== undefined", timeout=30000)
            state = page.evaluate("document.documentElement.dataset.charts")
            assert state == charts, f"charts {state}: {report.errors}"
            yield report
        finally:
            browser.close()


def check_page(page: Path, screenshot: Path, size: str = "1400,2400") -> str:
    """Render ``page``; return the verdict (``KASSIGN-OK <charts and images drawn>``) and write a screenshot.
    Fails the test when the page is broken."""
    width, height = (int(v) for v in size.split(","))
    with open_report(page, width, height) as report:
        bad = report.page.evaluate(
            "[...document.images].filter(i => !i.complete || i.naturalWidth === 0)"
            ".map(i => i.alt || i.src.slice(0, 40))")
        assert not bad, f"images that do not decode: {bad}"
        charts = report.page.evaluate(
            "[...document.querySelectorAll('.kchart')].map(d => [d.dataset.name, !!d.querySelector('svg.main-svg')])")
        undrawn = [name for name, drawn in charts if not drawn]
        assert not undrawn, f"charts not drawn: {undrawn}"
        report.page.screenshot(path=str(screenshot))
        report.assert_clean()
        images = report.page.evaluate("document.images.length")
    assert not blank(screenshot), "the screenshot is one flat colour"
    return f"KASSIGN-OK {len(charts) + images}"


def blank(png: Path) -> bool:
    import matplotlib.image

    pixels = matplotlib.image.imread(str(png))
    return bool(np.ptp(pixels[..., :3]) == 0)


def parse_figure(cell: str) -> float | None:
    """A table cell as a number: ``1.5 MiB`` -> 1572864.0, ``12,345`` -> 12345.0, ``12.5%`` -> 12.5; ``-`` -> None."""
    match = re.match(r"^(-?[\d,]+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB)?", cell.strip())
    if not match:
        return None
    factor = {"KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}.get(match.group(2) or "", 1)
    return float(match.group(1).replace(",", "")) * factor
