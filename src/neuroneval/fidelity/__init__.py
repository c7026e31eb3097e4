"""Fidelity report: the papers' claims that the embedded default can test, beside our measured values.

- :mod:`~neuroneval.fidelity.claims`: one module per paper, one builder per group of claims, each returning
  verdicts with measured reasons; the published numbers they compare with are :mod:`neuroneval.published`.
- :mod:`~neuroneval.fidelity.report`: reads the build's result files, assembles ``results/fidelity.csv`` and
  renders ``results/fidelity.md``.
"""

from neuroneval.fidelity.claims import COLUMNS, VERDICTS, Claim, claims_frame
from neuroneval.fidelity.report import FidelityInputs, fidelity_table, render_markdown

__all__ = ["COLUMNS", "VERDICTS", "Claim", "FidelityInputs", "claims_frame", "fidelity_table", "render_markdown"]
