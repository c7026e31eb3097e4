"""Snakemake entry point: see neuroneval.pipeline.sanity_steps.sanity_table3."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.sanity_steps import sanity_table3

run_step(sanity_table3, snakemake)  # noqa: F821 (injected by Snakemake)
