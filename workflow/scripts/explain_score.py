"""Snakemake entry point: see neuroneval.pipeline.explain_steps.explain_score."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.explain_steps import explain_score

run_step(explain_score, snakemake)  # noqa: F821 (injected by Snakemake)
