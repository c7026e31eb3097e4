"""Snakemake entry point: see neuroneval.pipeline.explain_steps.explain_setting."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.explain_steps import explain_setting

run_step(explain_setting, snakemake)  # noqa: F821 (injected by Snakemake)
