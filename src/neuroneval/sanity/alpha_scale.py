"""The α grid of the sanity tests at the paper's scale of α·n (000 Sec. 4.3, App. F.1; issue 33).

The paper's α grid starts at α = 10⁻⁴ on ImageNet's 50,000 validation images: its smallest top-α set holds
``α·n = 5`` inputs. The same grid on a 10,000-image probe set selects 1–2 inputs at α = 10⁻⁴…2·10⁻⁴, and on the
~900 digit images 0.09 of one; a binary metric then compares one active input with concepts of 10–140 positives,
and where every α ties on validation (digits) the first — the smallest — wins. Those α make F1, IoU and AUPRC fail
the experimental test for a reason the paper's protocol never meets. :func:`alpha_grid_at_scale` keeps the α
whose top set holds at least ``min_alpha_inputs`` inputs, ``α·n ≥ min_alpha_inputs`` (``sanity.min_alpha_inputs``:
5, the paper's), so every setting searches α on the paper's scale of α·n whatever its probe-set size.
"""

from __future__ import annotations

from collections.abc import Sequence


def alpha_grid_at_scale(alpha_grid: Sequence[float], n_inputs: int, *, min_alpha_inputs: int,
                        where: str = "sanity") -> list[float]:
    """The α of ``alpha_grid`` (order kept) whose top-α set over ``n_inputs`` inputs holds ``α·n ≥ min_alpha_inputs``.

    Raises ``ValueError`` naming ``where``, ``n_inputs`` and ``sanity.min_alpha_inputs`` when no α is left.

    >>> alpha_grid_at_scale([0.0001, 0.0002, 0.0005, 0.001], 10000, min_alpha_inputs=5)
    [0.0005, 0.001]
    >>> alpha_grid_at_scale([0.0001, 0.0005], 50000, min_alpha_inputs=5)  # the paper's ImageNet scale
    [0.0001, 0.0005]
    """
    if n_inputs < 1:
        raise ValueError(f"{where}: an α grid needs at least one input, got n = {n_inputs}")
    if min_alpha_inputs < 1:
        raise ValueError(f"{where}: sanity.min_alpha_inputs must be >= 1, got {min_alpha_inputs}")
    # α·n ≥ m, with a relative slack of 1e-9 so that α = m/n written in decimal is not lost to rounding
    kept = [float(alpha) for alpha in alpha_grid if float(alpha) * n_inputs >= min_alpha_inputs * (1 - 1e-9)]
    if not kept:
        raise ValueError(f"{where}: no α of {list(alpha_grid)} selects sanity.min_alpha_inputs = "
                         f"{min_alpha_inputs} of the {n_inputs} inputs (α·n ≥ {min_alpha_inputs} needs "
                         f"α ≥ {min_alpha_inputs / n_inputs:.3g})")
    return kept
