"""Snakemake entry point: see neuroneval.pipeline.cosy_steps.cosy_tables."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.cosy_steps import cosy_tables

run_step(cosy_tables, snakemake)  # noqa: F821 (injected by Snakemake)
