"""The ``viewer`` target on the tiny build: one offline page per Table 4 setting, a card per unit with a known
concept, every card's inputs shown, the score columns those of Table 3's passing metrics; each page renders in
headless Chromium at 1280 px without fetching anything (screenshots: ``$NEUROEVAL_SCREENSHOTS`` or tmp).

The shared tiny build makes the pages (``viewer`` is one of its targets, as the ``viewer`` DVC stage is one of
dvc.yaml's); rebuilding them reruns no job upstream of them."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from neuroneval.figures.viewer import passing_metrics
from tests.workflow.conftest import run_tool

LINK = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE)


def viewer_pages(workspace: Path) -> dict[str, Path]:
    params = yaml.safe_load((workspace / "params.yaml").read_text())
    settings = params["viewer"]["settings"] or params["meta"]["settings"]
    return {setting: workspace / "results/viewer" / setting / "index.html" for setting in settings}


def check_pages(workspace: Path) -> dict[str, int]:
    """Assert what every page must hold (file-level checks); return the number of cards per setting."""
    params = yaml.safe_load((workspace / "params.yaml").read_text())
    knobs = params["viewer"]
    metrics = (passing_metrics(pd.read_csv(workspace / "results/table3.csv")) if knobs["metrics"] == "sanity"
               else list(knobs["metrics"]))
    counts = {}
    for setting, page in viewer_pages(workspace).items():
        text = page.read_text(encoding="utf-8")
        truth = pd.read_csv(workspace / "data/truth" / f"{setting}.csv", dtype=str)
        expected = truth["unit"].nunique()
        if knobs["max_units"] is not None:
            expected = min(expected, knobs["max_units"])
        cards = text.count('<tr class="card"')
        assert 0 < cards <= expected, setting
        assert not LINK.search(text), f"{setting}: the page links to a network resource"
        for metric in metrics:
            assert f">{metric}<span" in text, f"{setting}: no {metric} column"
        dataset = params["settings"][setting]["dataset"]
        shown = "data:image/png;base64," if not dataset.startswith("text") else "<mark>"
        assert text.count(shown) >= cards, f"{setting}: a card without its inputs"
        counts[setting] = cards
    return counts


@pytest.fixture(scope="module")
def viewer_workspace(built_workspace: Path) -> Path:
    result = run_tool(["snakemake", "-n", "--forcerun", "viewer_setting", "viewer"], built_workspace)
    stats = result.stdout[result.stdout.index("Job stats:"):]
    planned = set(re.findall(r"^(\w+)\s+\d+\s*$", stats[: stats.index("\ntotal")], re.MULTILINE))
    assert planned == {"viewer_setting", "viewer"}, result.stdout  # rebuilding the pages reruns nothing upstream
    return built_workspace


def test_every_setting_has_a_page_with_its_cards(viewer_workspace: Path) -> None:
    counts = check_pages(viewer_workspace)
    assert set(counts) == set(viewer_pages(viewer_workspace))


def test_pages_render_offline_in_chromium(viewer_workspace: Path, tmp_path: Path) -> None:
    from tests.crowd.chromium import INSTALL_HINT, Browser, chromium_path
    from tests.figures.test_browser import OFFLINE, _load, _screenshot, _shots

    binary = chromium_path()
    if binary is None:
        pytest.fail(f"Chromium is needed for the viewer test but is not on PATH; install it with: {INSTALL_HINT}")
    counts = check_pages(viewer_workspace)
    with Browser(binary, extra_flags=OFFLINE) as browser:
        for setting, page in viewer_pages(viewer_workspace).items():
            requests = _load(browser, page.as_uri(), "document.querySelectorAll('tr.card').length > 0")
            assert requests == [], setting
            assert browser.evaluate("document.querySelectorAll('tr.card').length") == counts[setting]
            assert browser.evaluate("Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)")
            _screenshot(browser, _shots(tmp_path) / f"viewer_{setting}.png")
