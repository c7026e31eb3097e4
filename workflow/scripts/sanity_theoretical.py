"""Snakemake entry point: see neuroneval.pipeline.sanity_steps.sanity_theoretical."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.sanity_steps import sanity_theoretical

run_step(sanity_theoretical, snakemake)  # noqa: F821 (injected by Snakemake)
