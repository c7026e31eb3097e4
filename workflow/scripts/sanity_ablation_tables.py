"""Snakemake entry point: see neuroneval.pipeline.sanity_steps.sanity_ablation_tables."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.sanity_steps import sanity_ablation_tables

run_step(sanity_ablation_tables, snakemake)  # noqa: F821 (injected by Snakemake)
