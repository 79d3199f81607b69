"""Open a kassign HTML report in a real headless Chromium and say whether it renders.

Tests that use this skip where no Chromium is installed (a user's clone); CI installs
Debian's package. A page is *broken* when the browser cannot show it: an image that does
not decode, a script error, an empty or blank screen.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--hide-scrollbars", "--allow-file-access-from-files"]

# After load, the page writes into its own title what a reader would miss.
_PROBE = """<script>
window.addEventListener('error', e => { document.title = 'KASSIGN-BROKEN script: ' + e.message; });
window.addEventListener('load', () => {
  const bad = [...document.images].filter(i => !i.complete || i.naturalWidth === 0).map(i => i.alt || i.src.slice(0, 40));
  if (!document.title.startsWith('KASSIGN-BROKEN'))
    document.title = bad.length ? 'KASSIGN-BROKEN images: ' + bad.join(', ') : 'KASSIGN-OK ' + document.images.length;
});
</script>"""


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium installed (CI installs Debian's chromium package)")


def check_page(page: Path, screenshot: Path, size: str = "1400,2400") -> str:
    """Render ``page``; return the probe's verdict (``KASSIGN-OK <images>``) and write a screenshot.
    Fails the test when the page is broken."""
    browser = chromium()
    html = page.read_text(encoding="utf-8")
    probed = html.replace("</body>", _PROBE + "</body>") if "</body>" in html else html + _PROBE
    with tempfile.TemporaryDirectory() as profile:
        copy = Path(profile) / "page.html"
        copy.write_text(probed, encoding="utf-8")
        env = {**os.environ, "HOME": profile}
        dom = subprocess.run([browser, *_FLAGS, f"--user-data-dir={profile}/p", "--virtual-time-budget=5000",
                              "--dump-dom", copy.as_uri()], capture_output=True, text=True, timeout=120, env=env)
        shot = subprocess.run([browser, *_FLAGS, f"--user-data-dir={profile}/s", f"--window-size={size}",
                               f"--screenshot={screenshot}", copy.as_uri()],
                              capture_output=True, text=True, timeout=120, env=env)
    title = re.search(r"<title>(.*?)</title>", dom.stdout, re.S)
    verdict = title.group(1).strip() if title else f"no title; chromium said: {dom.stderr[-300:]}"
    assert verdict.startswith("KASSIGN-OK"), verdict
    assert shot.returncode == 0 and screenshot.exists(), shot.stderr[-300:]
    assert not blank(screenshot), "the screenshot is one flat colour"
    return verdict


def blank(png: Path) -> bool:
    import matplotlib.image

    pixels = matplotlib.image.imread(str(png))
    return bool(np.ptp(pixels[..., :3]) == 0)
