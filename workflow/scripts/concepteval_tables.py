"""Snakemake entry point: see neuroneval.pipeline.concepteval_steps.concepteval_tables."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.concepteval_steps import concepteval_tables

run_step(concepteval_tables, snakemake)  # noqa: F821 (injected by Snakemake)
