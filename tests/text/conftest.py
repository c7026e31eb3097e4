"""Small text worlds and a tiny trained language model shared by the text tests (built once per session)."""

import contextlib
from pathlib import Path

import pytest
import torch

from neuroneval.models.lm import LMTraining, save_lm, train_lm
from neuroneval.worlds.text import TextWorld, build_text_world


@contextlib.contextmanager
def one_thread():
    """Tiny models run fastest on one thread; more threads only spin when other jobs share the cores."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


SMALL = {"vocab_size": 300, "n_topics": 4, "doc_length": 64}
CONTEXT = 16


@pytest.fixture(scope="session")
def train_world() -> TextWorld:
    return build_text_world(300, seed=1, split="train", **SMALL)


@pytest.fixture(scope="session")
def probe_world(train_world: TextWorld) -> TextWorld:
    return build_text_world(60, seed=1, split="probe", vocabulary=train_world.vocabulary, **SMALL)


@pytest.fixture(scope="session")
def tiny_lm(train_world: TextWorld, tmp_path_factory: pytest.TempPathFactory):
    """A 1-layer, 16-dim model trained for two short epochs, and the directory it was saved to."""
    with one_thread():
        model, report = train_lm(train_world.token_ids, len(train_world.vocabulary), size="tiny",
                                 context_length=CONTEXT,
                                 training=LMTraining(batch_size=16, epochs=2, learning_rate=1e-2, seed=0))
    directory = Path(tmp_path_factory.mktemp("tiny_lm")) / "model"
    save_lm(model, directory, vocabulary=train_world.vocabulary, report=report)
    return model, report, directory


@pytest.fixture(scope="package", autouse=True)
def one_torch_thread():
    with one_thread():
        yield
