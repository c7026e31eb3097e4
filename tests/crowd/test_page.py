"""The study page in headless Chromium: tick inputs, download ratings.csv, ingest it.

Needs Debian's ``chromium`` (``apt-get update && apt-get install -y chromium``); without it the test fails.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from neuroneval.crowd import design_study, estimate_correlations, is_correlation, read_ratings, write_study
from tests.crowd.chromium import INSTALL_HINT, Browser, chromium_path
from tests.crowd.synthetic import planted_world


def test_tick_download_ingest(tmp_path):
    binary = chromium_path()
    if binary is None:
        pytest.fail(f"Chromium is needed for the study-page test but is not on PATH; install it with: {INSTALL_HINT}")
    world = planted_world(n=1500, n_units=3, seed=8)
    activations = pd.DataFrame(world.activations, columns=world.unit_ids)
    activations.insert(0, "input_id", np.arange(1500, dtype=np.int64))
    pseudo = pd.DataFrame(world.pseudo_labels, columns=world.concept_names)
    pseudo.insert(0, "input_id", activations["input_id"])
    pairs = pd.DataFrame({"unit": world.unit_ids, "explanation": [world.concept_names[t] for t in world.planted]})
    design = design_study(activations, pairs, pseudo_labels=pseudo, n_draws=25, tasks_per_batch=50)
    media = {
        int(i): np.full((6, 6, 3), i % 256, dtype=np.uint8) if i % 2 else f"text of input {i}"
        for i in design.samples["input_id"]
    }
    study = tmp_path / "study"
    pages = [p for p in write_study(design, study, media=media) if p.suffix == ".html"]
    assert len(pages) == 1
    concept = world.planted[design.samples["pair"].to_numpy()]
    truth = world.labels[design.samples["input_id"].to_numpy(), concept].astype(int)
    ticks = [
        [task, int(i)]
        for task, i, label in zip(design.samples["task"], design.samples["input_id"], truth, strict=True)
        if label
    ]
    assert 0 < len(ticks) < len(truth)

    downloads = tmp_path / "downloads"
    with Browser(binary) as browser:
        browser.allow_downloads(downloads)
        browser.open(pages[0].as_uri())
        assert browser.evaluate("document.querySelectorAll('input.answer').length") == len(design.samples)
        assert browser.evaluate("document.querySelectorAll('img').length") == int(
            sum(i % 2 for i in design.samples["input_id"])
        )
        assert browser.evaluate("performance.getEntriesByType('resource').length") == 0
        browser.evaluate("document.getElementById('download').click(); true")
        assert "rater ID" in browser.evaluate("document.getElementById('status').textContent")
        clicked = browser.evaluate(
            f"""(function () {{
                let clicked = 0;
                for (const [task, input] of {json.dumps(ticks)}) {{
                    const box = document.querySelector(`input.answer[data-task="${{task}}"][data-input="${{input}}"]`);
                    box.closest("label").click();
                    clicked += box.checked ? 1 : 0;
                }}
                return clicked;
            }})()"""
        )
        assert clicked == len(ticks)
        browser.evaluate("document.getElementById('rater').value = 'worker_7'; true")
        browser.evaluate("document.getElementById('download').click(); true")
        saved = browser.wait_for_file(downloads / "ratings.csv")
        assert "Saved" in browser.evaluate("document.getElementById('status').textContent")

    ratings = read_ratings(saved, design)
    assert len(ratings) == len(design.samples)
    assert set(ratings["rater"]) == {"worker_7"}
    merged = design.samples.assign(truth=truth).merge(
        ratings, left_on=["task", "input_id"], right_on=["task", "input"], validate="one_to_one"
    )
    np.testing.assert_array_equal(merged["label"], merged["truth"])
    estimates = estimate_correlations(design, ratings, method="majority", n_boot=100)
    for row in estimates.itertuples():
        rows = design.samples[design.samples["pair"] == row.pair]
        expand = np.repeat(rows.index.to_numpy(), rows["draws"].to_numpy())
        direct = is_correlation(
            design.samples.loc[expand, "activation"].to_numpy(),
            truth[expand].astype(float),
            design.samples.loc[expand, "weight"].to_numpy(),
        )
        assert row.rho == pytest.approx(float(direct), abs=1e-12)
