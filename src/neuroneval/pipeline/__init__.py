"""Glue between Snakemake rules and the library: one module per stage (``<stage>_steps.py``), one step function
per rule. Every rule runs ``workflow/scripts/step.py``, which calls :func:`run_rule`: it runs the step its
``step`` param names through :func:`run_step` (log, thread limits)."""

from neuroneval.pipeline.runner import StepIO, run_rule, run_step

__all__ = ["StepIO", "run_rule", "run_step"]
