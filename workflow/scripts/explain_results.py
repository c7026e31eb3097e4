"""Snakemake entry point: see neuroneval.pipeline.explain_steps.explain_results."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.explain_steps import explain_results

run_step(explain_results, snakemake)  # noqa: F821 (injected by Snakemake)
