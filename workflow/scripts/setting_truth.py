"""Snakemake entry point: see neuroneval.pipeline.probing_tables_steps.setting_truth."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.probing_tables_steps import setting_truth

run_step(setting_truth, snakemake)  # noqa: F821 (injected by Snakemake)
