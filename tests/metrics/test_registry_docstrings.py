"""Every registered metric's batched kernel and per-pair reference carry its formula in a docstring (issue 35).

The registry's ``formula`` ends with its source in parentheses, e.g. ``(000 Eq. A.7)``; each docstring must name
the metric (its registry name) and cite that same source, so the two stay in step with the registry entry.
"""

from __future__ import annotations

import inspect
import re

import pytest

import neuroneval.metrics.registry as registry
from neuroneval.metrics.reference import per_pair
from neuroneval.metrics.registry import METRICS

_SOURCE = re.compile(r"\((000 [^()]*)\)\s*$")


def _cited_equations(formula: str) -> list[str]:
    """The paper-000 citations at the end of a registry formula: ``"000 Eq. 4, Table A.1"`` → ``["Eq. 4"]``, or the
    section/appendix cited when no equation is (``"App. A.3 item 10"``, ``"Sec. 4.3"``)."""
    found = _SOURCE.search(formula)
    assert found, f"registry formula {formula!r} does not end with its source in paper 000, e.g. (000 Eq. A.7)"
    source = found.group(1)
    equations = re.findall(r"Eq\. [A-Z]?\.?\d+(?:\.\d+)?", source)
    return equations or [re.sub(r",.*", "", source.removeprefix("000 "))]


def test_the_registry_module_has_a_docstring() -> None:
    assert registry.__doc__ and "MetricSpec" in registry.__doc__


@pytest.mark.parametrize("metric", sorted(METRICS))
@pytest.mark.parametrize("side", ["kernel", "reference"])
def test_kernel_and_reference_docstrings_name_the_metric_and_its_equation(metric: str, side: str) -> None:
    spec = METRICS[metric]
    function = spec.kernel if side == "kernel" else per_pair(metric)
    doc = " ".join((inspect.getdoc(function) or "").split())
    assert doc, f"{function.__module__}.{function.__name__} ({metric} {side}) has no docstring"
    assert metric in doc, f"the {side} docstring of {metric} does not name it: {doc!r}"
    for citation in _cited_equations(spec.formula):
        assert citation in doc, (f"the {side} docstring of {metric} does not cite {citation!r} of its registry "
                                 f"formula {spec.formula!r}: {doc!r}")
