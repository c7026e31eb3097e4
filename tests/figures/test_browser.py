"""The neuron viewer and figures in headless Chromium at 1280 px: every card and figure is there, sorting works,
and nothing is fetched from the network (all assets inline).

Needs Debian's ``chromium`` (``apt-get update && apt-get install -y chromium``); without it the test fails.
Screenshots go to ``$NEUROEVAL_SCREENSHOTS`` when set (else the test's temporary folder).
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neuroneval.figures.crowd import plot_aggregation_curves
from neuroneval.figures.sanity import plot_delta_vs_gamma
from neuroneval.figures.viewer import assemble_cards, image_renderer, render_page, write_viewer
from tests.crowd.chromium import INSTALL_HINT, Browser, chromium_path

#: No host name resolves: a page that tried to fetch anything would fail loudly, and the request is logged.
OFFLINE = ("--host-resolver-rules=MAP * ~NOTFOUND", "--hide-scrollbars")
WIDTH = 1280


@pytest.fixture(scope="module")
def browser():
    binary = chromium_path()
    if binary is None:
        pytest.fail(f"Chromium is needed for the viewer test but is not on PATH; install it with: {INSTALL_HINT}")
    with Browser(binary, extra_flags=OFFLINE) as instance:
        yield instance


def _shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("NEUROEVAL_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _load(browser: Browser, url: str, ready: str) -> list[dict]:
    """Open ``url`` with network logging on; return the requests the page made (besides itself)."""
    target = browser.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
    browser.session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                   session=False)["sessionId"]
    browser.call("Network.enable")
    browser.call("Page.enable")
    browser.call("Emulation.setDeviceMetricsOverride",
                 {"width": WIDTH, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    browser.events.clear()
    browser.call("Page.navigate", {"url": url})
    browser.wait_for(f"document.readyState === 'complete' && ({ready})")
    requests = [event["params"]["request"]["url"] for event in browser.events
                if event.get("method") == "Network.requestWillBeSent"]
    return [request for request in requests if request != url and not request.startswith("data:")]


def _screenshot(browser: Browser, path: Path) -> Path:
    height = int(browser.evaluate("Math.min(document.documentElement.scrollHeight, 6000)"))
    shot = browser.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                   "clip": {"x": 0, "y": 0, "width": WIDTH, "height": height,
                                                            "scale": 1}})
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def _viewer_page(folder: Path) -> tuple[Path, int]:
    rng = np.random.default_rng(0)
    n, units = 60, 5
    concepts = (rng.random((n, units)) < 0.25).astype(np.float32)
    activations = (concepts + 0.3 * rng.random((n, units))).astype(np.float32)
    images = rng.integers(0, 255, size=(n, 16, 16, 3), dtype=np.uint8)
    names = [str(unit) for unit in range(units)]
    truth = pd.DataFrame({"unit": names, "concept": [f"class:c{unit}" for unit in range(units)]})
    explanations = {"netdissect": pd.DataFrame({"unit": names[:3], "explanation": ["class:c0", "x", "y"]})}
    cards = assemble_cards(activations, names, concepts, [f"class:c{unit}" for unit in range(units)], truth,
                           render=image_renderer(images, np.arange(n), scale=4), metrics=["correlation", "cosine"],
                           top_k=6, explanations=explanations)
    page = folder / "viewer" / "synthetic" / "index.html"
    write_viewer(page, render_page("synthetic", cards, metrics=["correlation", "cosine"], description="test"))
    return page, len(cards)


def test_viewer_shows_every_card_sorts_and_fetches_nothing(browser: Browser, tmp_path: Path) -> None:
    page, count = _viewer_page(tmp_path)
    requests = _load(browser, page.as_uri(), "document.querySelectorAll('tr.card').length > 0")
    assert requests == []
    assert browser.evaluate("document.querySelectorAll('tr.card').length") == count
    # every thumbnail decoded (inline data: PNGs), at the size the page asks for
    assert browser.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth === 16)")
    assert browser.evaluate("document.images.length") == count * 6
    assert browser.evaluate("Array.from(document.querySelectorAll('[src],[href]')).every("
                            "e => !/^(https?:)?\\/\\//.test(e.getAttribute('src') || e.getAttribute('href')))")
    assert browser.evaluate("document.documentElement.scrollWidth") <= WIDTH  # no sideways scrolling at 1280 px
    # clicking the correlation header sorts the cards by it, descending, then ascending
    scores = "Array.from(document.querySelectorAll('tr.card')).map(r => parseFloat(r.cells[4].dataset.sort))"
    browser.evaluate("document.querySelectorAll('thead th')[4].click()")
    descending = browser.evaluate(scores)
    assert descending == sorted(descending, reverse=True)
    browser.evaluate("document.querySelectorAll('thead th')[4].click()")
    assert browser.evaluate(scores) == sorted(descending)
    _screenshot(browser, _shots(tmp_path) / "viewer_synthetic.png")


def test_the_network_log_sees_a_page_that_fetches(browser: Browser, tmp_path: Path) -> None:
    """The check above is not vacuous: a remote image is logged (and fails to resolve)."""
    page = tmp_path / "remote.html"
    page.write_text('<!DOCTYPE html><html><body><img src="https://example.invalid/x.png"></body></html>')
    requests = _load(browser, page.as_uri(), "Array.from(document.images).every(i => i.complete)")
    assert requests == ["https://example.invalid/x.png"]


def test_figures_render_at_1280_px_without_network(browser: Browser, tmp_path: Path) -> None:
    gammas = [0.499, 0.1, 0.01, 0.001, 0.0001]
    metrics = ["recall", "precision", "iou", "auc", "correlation", "spearman_tr"]
    theoretical = pd.DataFrame([{"test": "extra", "ties": "average", "metric": metric, "gamma": gamma,
                                 "mean_delta": -0.5 * index / len(metrics) * (1 - gamma)}
                                for index, metric in enumerate(metrics) for gamma in gammas])
    figure3 = plot_delta_vs_gamma(theoretical, metrics=metrics, test="extra", passing=metrics[1:4], epsilon=0.001,
                                  path=tmp_path / "figure3.png")
    rows = [{"method": method, "cost": cost, "n_raters": raters, "rce": 1.0 / np.sqrt(cost) * (1 + shift),
             "rce_se": 0.01, "best": True}
            for shift, method in enumerate(("average", "majority", "bayes_pseudo"))
            for cost, raters in ((20, 1), (60, 3), (200, 3))]
    aggregation = plot_aggregation_curves(pd.DataFrame(rows), tmp_path / "crowd_aggregation.png")
    page = tmp_path / "figures.html"
    page.write_text("<!DOCTYPE html><html><body>" + "".join(
        f'<figure><img id="{path.stem}" style="max-width:100%" src="{path.name}"></figure>'
        for path in (figure3, aggregation)) + "</body></html>")
    requests = _load(browser, page.as_uri(), "Array.from(document.images).every(i => i.complete)")
    assert all(request.startswith("file://") for request in requests)  # the two PNGs, from disk
    widths = browser.evaluate("Array.from(document.images).map(i => i.naturalWidth)")
    assert len(widths) == 2 and all(0 < width <= WIDTH for width in widths)
    _screenshot(browser, _shots(tmp_path) / "figures_synthetic.png")
