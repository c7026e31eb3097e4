"""Snakemake entry point: see neuroneval.pipeline.concepteval_steps.concepteval_hidden."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.concepteval_steps import concepteval_hidden

run_step(concepteval_hidden, snakemake)  # noqa: F821 (injected by Snakemake)
