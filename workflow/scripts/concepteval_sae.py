"""Snakemake entry point: see neuroneval.pipeline.concepteval_steps.concepteval_sae."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.concepteval_steps import concepteval_sae

run_step(concepteval_sae, snakemake)  # noqa: F821 (injected by Snakemake)
