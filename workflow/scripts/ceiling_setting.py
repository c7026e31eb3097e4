"""Snakemake entry point: see neuroneval.pipeline.meta_steps.ceiling_setting."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.meta_steps import ceiling_setting

run_step(ceiling_setting, snakemake)  # noqa: F821 (injected by Snakemake)
