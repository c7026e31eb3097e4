"""Snakemake entry point: see neuroneval.pipeline.meta_steps.table4."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.meta_steps import table4

run_step(table4, snakemake)  # noqa: F821 (injected by Snakemake)
