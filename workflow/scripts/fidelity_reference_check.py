"""Snakemake entry point: see neuroneval.pipeline.fidelity_steps.fidelity_reference_check."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.fidelity_steps import fidelity_reference_check

run_step(fidelity_reference_check, snakemake)  # noqa: F821 (injected by Snakemake)
