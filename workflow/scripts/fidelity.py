"""Snakemake entry point: see neuroneval.pipeline.fidelity_steps.fidelity."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.fidelity_steps import fidelity

run_step(fidelity, snakemake)  # noqa: F821 (injected by Snakemake)
