"""Snakemake entry point: see neuroneval.pipeline.worlds_steps.worlds_report."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.worlds_steps import worlds_report

run_step(worlds_report, snakemake)  # noqa: F821 (injected by Snakemake)
