"""Workflow steps of the fidelity report (``fidelity.smk``): our values beside the papers' (:mod:`neuroneval.fidelity`),
and the reference-mode theoretical test it compares with the authors' notebook.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from neuroneval import io
from neuroneval.pipeline.runner import StepIO


def fidelity(job: StepIO) -> None:
    """The fidelity report: every testable claim of papers 000–002, 004 beside ours (``neuroneval.fidelity``)."""
    from neuroneval.crowd.rarity import PAPER_RARITY
    from neuroneval.fidelity import FidelityInputs, fidelity_table, render_markdown
    from neuroneval.fidelity.report import FILE_LISTS, PARAMS, theoretical_cells

    paths = {name: tuple(Path(path) for path in job.input[name]) if name in FILE_LISTS else Path(job.input[name])
             for name in FidelityInputs.__dataclass_fields__ if name not in PARAMS}
    inputs = FidelityInputs(**paths, paper_settings=dict(job.params.paper_settings), class_rarity=PAPER_RARITY,
                            explain_protocols=dict(job.params.explain_protocols),
                            explain_bootstrap=dict(job.params.explain_bootstrap))
    cells = theoretical_cells(inputs)
    table = fidelity_table(inputs, cells)
    print(table["verdict"].value_counts().to_string())
    io.write_csv(job.output.table, table)
    io.write_text(job.output.markdown, render_markdown(table, cells))


def fidelity_reference_check(job: StepIO) -> None:
    """Reference-mode theoretical test at the published size, once per seed (``sanity.reference_check``): the
    fidelity report sets it beside the authors' notebook outputs (Tables C.1–C.4). All 18 metrics; rows of
    :func:`~neuroneval.sanity.theoretical_test` stacked over seeds (``seed`` column)."""
    from neuroneval.sanity import theoretical_test
    from neuroneval.sanity.options import ReferenceCheckOptions, TheoreticalOptions

    theoretical = TheoreticalOptions.from_params(job.params.theoretical)
    check = ReferenceCheckOptions.from_params(job.params.check)
    runs = [theoretical_test(None, gammas=list(theoretical.gammas), n=check.n, draws=check.draws, ties="reference",
                             epsilon=job.params.epsilon, seed=seed, lam=theoretical.lam, device=theoretical.device,
                             workers=job.threads)
            for seed in check.seeds]
    io.write_csv(job.output[0], pd.concat(runs, ignore_index=True).drop(columns="seconds"))
