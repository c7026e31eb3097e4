"""Shared wiring of the concepteval tests: one torch thread (the machine's cores are shared), a tiny GPT-2."""

import pytest
import torch

from neuroneval.models.lm import build_lm

VOCAB = 23
CONTEXT = 8


@pytest.fixture(scope="package", autouse=True)
def one_torch_thread():
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="package")
def tiny_lm():
    """An untrained 1-block, 16-dim GPT-2 in float64 (exact finite differences), eval mode."""
    return build_lm(VOCAB, size="tiny", context_length=CONTEXT, seed=3).double().eval()


@pytest.fixture(scope="package")
def windows():
    generator = torch.Generator().manual_seed(0)
    return torch.randint(0, VOCAB, (3, CONTEXT), generator=generator)
