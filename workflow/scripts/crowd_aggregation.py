"""Snakemake entry point: see neuroneval.pipeline.crowd_steps.crowd_aggregation."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.crowd_steps import crowd_aggregation

run_step(crowd_aggregation, snakemake)  # noqa: F821 (injected by Snakemake)
