"""The library's one progress bar (:mod:`neuroneval.progress`): on stderr once a loop has run for a while, rarely
redrawn into a file, silent when disabled; and long jobs write it into their log (stderr redirected to the log
file, as ``neuroneval.pipeline.runner`` does for every workflow job)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from neuroneval import progress
from neuroneval.concepteval.sae import SAEOptions, train_sae
from neuroneval.explain.compositional import beam_search, iou_objective
from neuroneval.explain.options import CompositionalOptions
from neuroneval.models.training import fit
from neuroneval.progress import progress_bar


@pytest.fixture
def no_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "DELAY_S", 0.0)


def test_bar_counts_on_stderr(no_delay: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert list(progress_bar(range(5), desc="counting", unit="thing")) == list(range(5))
    err = capsys.readouterr().err
    assert "counting" in err and "5/5" in err and "thing" in err


def test_disabled_bar_prints_nothing(no_delay: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert list(progress_bar(range(5), desc="counting", enabled=False)) == list(range(5))
    assert capsys.readouterr().err == ""


def test_quick_loop_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """A loop shorter than the delay leaves no bar (the default delay, not patched)."""
    assert progress.DELAY_S >= 1
    with progress_bar(total=3, desc="quick") as bar:
        bar.update(3)
    assert capsys.readouterr().err == ""


def test_a_log_file_is_redrawn_rarely(no_delay: None, tmp_path: Path) -> None:
    with open(tmp_path / "job.log", "w") as log, contextlib.redirect_stderr(log):
        bar = progress_bar(total=2, desc="logged")
        bar.update(2)
        bar.close()
    assert bar.mininterval == progress.LOG_INTERVAL_S > progress.TERMINAL_INTERVAL_S
    assert "logged" in (tmp_path / "job.log").read_text()


def _train_tiny() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    inputs = torch.randn(8, 2)
    fit(model, 8, lambda rows: model(inputs[torch.from_numpy(rows)]).pow(2).mean(), epochs=2, batch_size=4,
        learning_rate=0.01, seed=0, desc="train tiny")


def _train_sae() -> None:
    train_sae(np.random.default_rng(0).random((20, 4)), SAEOptions(epochs=3, batch_size=8))


def _beam_search() -> None:
    rng = np.random.default_rng(0)
    concepts = (rng.random((40, 5)) < 0.3).astype(np.float64)
    units = (rng.random((2, 40)) < 0.2).astype(np.float64)
    beam_search(units, concepts, [f"c{t}" for t in range(5)], iou_objective(units.sum(axis=1), 40),
                CompositionalOptions(max_length=3, beam_size=2))


@pytest.mark.parametrize(("job", "expected"), [(_train_tiny, ("train tiny", "4/4")),
                                               (_train_sae, ("sparse autoencoder", "3/3")),
                                               (_beam_search, ("beam search", "2/2"))])
def test_long_jobs_write_their_bar_into_the_log(no_delay: None, tmp_path: Path, job: Callable[[], None],
                                                expected: tuple[str, str]) -> None:
    log_path = tmp_path / "job.log"
    with open(log_path, "w") as log, contextlib.redirect_stderr(log):
        job()
    text = log_path.read_text()
    assert all(part in text for part in expected), text
