"""Snakemake entry point: see neuroneval.pipeline.steps.meta_metric."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.steps import meta_metric

run_step(meta_metric, snakemake)  # noqa: F821 (injected by Snakemake)
