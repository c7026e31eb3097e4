"""Snakemake entry point: see neuroneval.pipeline.meta_steps.meta_setting."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.meta_steps import meta_setting

run_step(meta_setting, snakemake)  # noqa: F821 (injected by Snakemake)
