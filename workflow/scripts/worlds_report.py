"""Snakemake entry point: see neuroneval.pipeline.steps.worlds_report."""

from neuroneval.pipeline import run_step
from neuroneval.pipeline.steps import worlds_report

run_step(worlds_report, snakemake)  # noqa: F821 (injected by Snakemake)
