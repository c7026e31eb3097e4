"""Fixtures of the paper-profile tests: offline guard, a tiny fake data tree, merged params and a step runner."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.external.fakes import paper_overrides, write_imagenet_masks, write_paper_tree
from tests.loaders.conftest import offline  # noqa: F401 (autouse: no network in these tests)
from tests.workflow.conftest import deep_update

ROOT = Path(__file__).resolve().parents[2]


def paper_params(data_root: Path) -> dict[str, Any]:
    """params.yaml, then profiles/paper.yaml, then the overlay pointing at ``data_root``, merged as Snakemake does."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params = deep_update(params, yaml.safe_load((ROOT / "profiles/paper.yaml").read_text()))
    return deep_update(params, paper_overrides(data_root))


@pytest.fixture(scope="session")
def paper_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A miniature of every dataset and checkpoint the paper profile names (ImageNet's concept masks included, so
    that the tree is the same whichever test runs first), and the original models."""
    data_root = tmp_path_factory.mktemp("paper_inputs")
    models = write_paper_tree(data_root)
    write_imagenet_masks(data_root)
    return data_root, models


@pytest.fixture(scope="session")
def params(paper_tree: tuple[Path, dict]) -> dict[str, Any]:
    return paper_params(paper_tree[0])


class Named(dict):
    """A Snakemake-like named list: ``job.output.concepts`` and ``job.output[0]``; paths become strings."""

    def __init__(self, values: dict | None = None) -> None:
        super().__init__({key: str(value) if isinstance(value, Path) else value
                          for key, value in (values or {}).items()})

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError as error:
            raise AttributeError(name) from error

    def __getitem__(self, key: str | int) -> Any:
        return list(self.values())[key] if isinstance(key, int) else super().__getitem__(key)


def run_step(step: Callable, *, input: dict | None = None, output: dict | None = None,
             params: dict | None = None, wildcards: dict | None = None) -> None:
    """Call a workflow step the way Snakemake would."""
    from neuroneval.pipeline.runner import StepIO

    step(StepIO(Named(input), Named(output), Named(params), Named(wildcards)))
