"""Snakemake entry point: see neuroneval.pipeline.viewer_steps.viewer_setting."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.viewer_steps import viewer_setting

run_step(viewer_setting, snakemake)  # noqa: F821 (injected by Snakemake)
