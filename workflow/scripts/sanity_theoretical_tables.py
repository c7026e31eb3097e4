"""Snakemake entry point: see neuroneval.pipeline.sanity_steps.sanity_theoretical_tables."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.sanity_steps import sanity_theoretical_tables

run_step(sanity_theoretical_tables, snakemake)  # noqa: F821 (injected by Snakemake)
