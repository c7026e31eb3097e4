"""Snakemake entry point: see neuroneval.pipeline.sanity_steps.sanity_meta_tables."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.sanity_steps import sanity_meta_tables

run_step(sanity_meta_tables, snakemake)  # noqa: F821 (injected by Snakemake)
