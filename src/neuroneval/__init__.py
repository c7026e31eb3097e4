"""neuroneval: evaluate neuron explanations and the metrics used to evaluate them.

The common calls import from here (``from neuroneval import score, score_table``); the module behind each name is
imported on first use (PEP 562), so ``import neuroneval`` itself stays cheap.
"""

import importlib

__version__ = "0.1.0"

#: Names importable from ``neuroneval``: name → the module that defines it (add an entry to export another).
LAZY_NAMES = {
    "score": "neuroneval.metrics",
    "score_pairs": "neuroneval.metrics",
    "score_units": "neuroneval.metrics",
    "score_grid": "neuroneval.metrics",
    "score_table": "neuroneval.metrics.table",
    "FeatureCache": "neuroneval.metrics",
    "METRICS": "neuroneval.metrics",
    "evaluate": "neuroneval.explain.evaluate",
    "EvaluateOptions": "neuroneval.explain.evaluate",
}


def __getattr__(name: str) -> object:
    if name not in LAZY_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(LAZY_NAMES[name]), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *LAZY_NAMES})
