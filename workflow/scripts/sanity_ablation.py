"""Snakemake entry point: see neuroneval.pipeline.sanity_steps.sanity_ablation."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.sanity_steps import sanity_ablation

run_step(sanity_ablation, snakemake)  # noqa: F821 (injected by Snakemake)
