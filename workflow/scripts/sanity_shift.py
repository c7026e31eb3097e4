"""Snakemake entry point: see neuroneval.pipeline.sanity_steps.sanity_shift."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.sanity_steps import sanity_shift

run_step(sanity_shift, snakemake)  # noqa: F821 (injected by Snakemake)
