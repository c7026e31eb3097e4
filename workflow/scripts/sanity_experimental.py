"""Snakemake entry point: see neuroneval.pipeline.sanity_steps.sanity_experimental."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.sanity_steps import sanity_experimental

run_step(sanity_experimental, snakemake)  # noqa: F821 (injected by Snakemake)
