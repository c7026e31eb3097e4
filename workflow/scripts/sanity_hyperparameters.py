"""Snakemake entry point: see neuroneval.pipeline.sanity_steps.sanity_hyperparameters."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.sanity_steps import sanity_hyperparameters

run_step(sanity_hyperparameters, snakemake)  # noqa: F821 (injected by Snakemake)
