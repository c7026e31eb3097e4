"""Top-level names of ``neuroneval`` (PEP 562): the library's own objects, loaded only when first used."""

from __future__ import annotations

import subprocess
import sys

import pytest

import neuroneval
import neuroneval.metrics
import neuroneval.metrics.table


def test_every_lazy_name_is_the_defining_modules_object() -> None:
    for name, module in neuroneval.LAZY_NAMES.items():
        assert getattr(neuroneval, name) is getattr(sys.modules[module], name)
        assert name in dir(neuroneval)
    from neuroneval import FeatureCache, score, score_table

    assert score is neuroneval.metrics.score and score_table is neuroneval.metrics.table.score_table
    assert FeatureCache is neuroneval.metrics.FeatureCache
    from neuroneval import EvaluateOptions, evaluate
    from neuroneval.explain import evaluate as evaluate_module

    assert evaluate is evaluate_module.evaluate and EvaluateOptions is evaluate_module.EvaluateOptions


def test_unknown_names_and_submodules() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        neuroneval.nope  # noqa: B018
    from neuroneval import io  # a submodule still imports as one

    assert io.ID_COLUMN == "input_id"


def test_importing_the_package_imports_no_library_module() -> None:
    code = ("import sys, neuroneval; heavy = [m for m in ('numpy', 'pandas', 'neuroneval.metrics') if m in "
            "sys.modules]; print(heavy); neuroneval.score; print('neuroneval.metrics' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:2] == ["[]", "True"]
