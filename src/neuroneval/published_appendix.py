"""Paper 000's appendix Tables C.1–C.4 (the theoretical sanity tests per activation frequency γ) and D.2 (the
closed forms of the binary metrics' Δs on the ideal unit), as printed, each record read by field name.

A low-level module like :mod:`neuroneval.published` (which re-exports these names): it imports nothing of the
package. :mod:`neuroneval.sanity.printed_reference` sets them beside the authors' notebook outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class GammaRow:
    """Paper 000, Tables C.1–C.4: one metric's printed value at each activation frequency γ of App. C.

    Decrease Acc (C.1–C.2) as a fraction, mean Δs (C.3–C.4) as printed. ``limit`` is the ``lim γ→0`` column of
    C.3–C.4 (None where the paper prints "-", and in C.1–C.2); ``passes`` the Pass column of C.1–C.2 (None in
    C.3–C.4). Read a column with :meth:`at`.
    """

    gamma_0_499: float
    gamma_0_1: float
    gamma_0_01: float
    gamma_0_001: float
    gamma_0_0001: float
    limit: float | None = None
    passes: bool | None = None

    def at(self, gamma: float) -> float:
        """The value in the column of ``gamma`` (one of :data:`TABLE_C_GAMMAS`)."""
        for column, value in zip(TABLE_C_GAMMAS, self.values(), strict=True):
            if abs(column - float(gamma)) < 1e-12:
                return value
        raise KeyError(f"γ = {gamma} is not a column of Tables C.1–C.4 {TABLE_C_GAMMAS}")

    def values(self) -> tuple[float, float, float, float, float]:
        """The five γ columns in the printed order (γ = 0.499 … 0.0001)."""
        return (self.gamma_0_499, self.gamma_0_1, self.gamma_0_01, self.gamma_0_001, self.gamma_0_0001)


@dataclass(frozen=True)
class ClosedFormRow:
    """Paper 000, Table D.2: a binary metric's Δs on the ideal unit as printed, as text and as a function of γ.

    ``missing`` is the missing-labels test (p = 0.5), ``extra`` the extra-labels test (p = 1).
    """

    missing_text: str
    extra_text: str
    missing: Callable[[float], float]
    extra: Callable[[float], float]


#: Activation frequencies γ of the columns of paper 000, Tables C.1–C.4 (App. C: n = 500,000, 1,000 draws).
TABLE_C_GAMMAS: tuple[float, ...] = (0.499, 0.1, 0.01, 0.001, 0.0001)

#: Paper 000, Table C.1: Decrease Acc of the theoretical missing-labels test per γ (fractions) and the Pass column.
TABLE_C1: dict[str, GammaRow] = {
    "recall": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "precision": GammaRow(
        gamma_0_499=0.0, gamma_0_1=0.0, gamma_0_01=0.0, gamma_0_001=0.0, gamma_0_0001=0.0, passes=False,
    ),
    "f1": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "iou": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "accuracy": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=0.0, gamma_0_0001=0.0, passes=False,
    ),
    "balanced_accuracy": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "inverse_balanced_accuracy": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=0.0, gamma_0_0001=0.0, passes=False,
    ),
    "auc": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "inverse_auc": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=0.0, gamma_0_0001=0.0, passes=False,
    ),
    "correlation": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "correlation_tr": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "spearman": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=0.227, gamma_0_0001=0.133, passes=False,
    ),
    "spearman_tr": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "cosine": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "wpmi": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "mad": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=0.0, gamma_0_0001=0.0, passes=False,
    ),
    "auprc": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "inverse_auprc": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
}
#: Paper 000, Table C.2: Decrease Acc of the theoretical extra-labels test per γ (fractions) and the Pass column.
TABLE_C2: dict[str, GammaRow] = {
    "recall": GammaRow(
        gamma_0_499=0.0, gamma_0_1=0.0, gamma_0_01=0.0, gamma_0_001=0.0, gamma_0_0001=0.0, passes=False,
    ),
    "precision": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "f1": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "iou": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "accuracy": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=0.484, gamma_0_0001=0.0, passes=False,
    ),
    "balanced_accuracy": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=0.0, gamma_0_0001=0.0, passes=False,
    ),
    "inverse_balanced_accuracy": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "auc": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=0.0, gamma_0_0001=0.0, passes=False,
    ),
    "inverse_auc": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "correlation": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "correlation_tr": GammaRow(
        gamma_0_499=1.0, gamma_0_1=0.928, gamma_0_01=0.226, gamma_0_001=0.027, gamma_0_0001=0.001, passes=False,
    ),
    "spearman": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=0.056, gamma_0_001=0.032, gamma_0_0001=0.116, passes=False,
    ),
    "spearman_tr": GammaRow(
        gamma_0_499=0.002, gamma_0_1=0.086, gamma_0_01=0.206, gamma_0_001=0.637, gamma_0_0001=0.053, passes=False,
    ),
    "cosine": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "wpmi": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "mad": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "auprc": GammaRow(
        gamma_0_499=1.0, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=True,
    ),
    "inverse_auprc": GammaRow(
        gamma_0_499=0.477, gamma_0_1=1.0, gamma_0_01=1.0, gamma_0_001=1.0, gamma_0_0001=1.0, passes=False,
    ),
}
#: Paper 000, Table C.3: mean Δs of the theoretical missing-labels test per γ and ``lim γ→0`` (App. D), as printed.
TABLE_C3: dict[str, GammaRow] = {
    "recall": GammaRow(
        gamma_0_499=-0.5, gamma_0_1=-0.4999, gamma_0_01=-0.5002, gamma_0_001=-0.5007, gamma_0_0001=-0.5025,
        limit=-0.5,
    ),
    "precision": GammaRow(
        gamma_0_499=0.0, gamma_0_1=0.0, gamma_0_01=0.0, gamma_0_001=0.0, gamma_0_0001=0.0, limit=0.0,
    ),
    "f1": GammaRow(
        gamma_0_499=-0.3334, gamma_0_1=-0.3333, gamma_0_01=-0.3335, gamma_0_001=-0.3341, gamma_0_0001=-0.3352,
        limit=-0.3333,
    ),
    "iou": GammaRow(
        gamma_0_499=-0.5, gamma_0_1=-0.5002, gamma_0_01=-0.4998, gamma_0_001=-0.5005, gamma_0_0001=-0.5032,
        limit=-0.5,
    ),
    "accuracy": GammaRow(
        gamma_0_499=-0.2495, gamma_0_1=-0.05, gamma_0_01=-0.005, gamma_0_001=-0.0005, gamma_0_0001=0.0, limit=0.0,
    ),
    "balanced_accuracy": GammaRow(
        gamma_0_499=-0.25, gamma_0_1=-0.25, gamma_0_01=-0.2501, gamma_0_001=-0.25, gamma_0_0001=-0.25, limit=-0.25,
    ),
    "inverse_balanced_accuracy": GammaRow(
        gamma_0_499=-0.1662, gamma_0_1=-0.0263, gamma_0_01=-0.0025, gamma_0_001=-0.0002, gamma_0_0001=0.0, limit=0.0,
    ),
    "auc": GammaRow(
        gamma_0_499=-0.25, gamma_0_1=-0.25, gamma_0_01=-0.25, gamma_0_001=-0.2493, gamma_0_0001=-0.2508, limit=None,
    ),
    "inverse_auc": GammaRow(
        gamma_0_499=-0.1662, gamma_0_1=-0.0263, gamma_0_01=-0.0025, gamma_0_001=-0.0003, gamma_0_0001=0.0, limit=None,
    ),
    "correlation": GammaRow(
        gamma_0_499=-0.2111, gamma_0_1=-0.1559, gamma_0_01=-0.1474, gamma_0_001=-0.1466, gamma_0_0001=-0.1479,
        limit=None,
    ),
    "correlation_tr": GammaRow(
        gamma_0_499=-0.4965, gamma_0_1=-0.4894, gamma_0_01=-0.4649, gamma_0_001=-0.3928, gamma_0_0001=-0.2449,
        limit=None,
    ),
    "spearman": GammaRow(
        gamma_0_499=-0.2, gamma_0_1=-0.0686, gamma_0_01=-0.0079, gamma_0_001=-0.0006, gamma_0_0001=-0.0018,
        limit=None,
    ),
    "spearman_tr": GammaRow(
        gamma_0_499=-0.1005, gamma_0_1=-0.1009, gamma_0_01=-0.1066, gamma_0_001=-0.0902, gamma_0_0001=-0.2006,
        limit=None,
    ),
    "cosine": GammaRow(
        gamma_0_499=-0.1464, gamma_0_1=-0.1465, gamma_0_01=-0.1465, gamma_0_001=-0.1464, gamma_0_0001=-0.1474,
        limit=None,
    ),
    "wpmi": GammaRow(
        gamma_0_499=-0.359, gamma_0_1=-0.3591, gamma_0_01=-0.3589, gamma_0_001=-0.3587, gamma_0_0001=-0.3602,
        limit=None,
    ),
    "mad": GammaRow(
        gamma_0_499=-0.221, gamma_0_1=-0.035, gamma_0_01=-0.0033, gamma_0_001=-0.0003, gamma_0_0001=0.0, limit=None,
    ),
    "auprc": GammaRow(
        gamma_0_499=-0.2505, gamma_0_1=-0.4499, gamma_0_01=-0.4953, gamma_0_001=-0.5003, gamma_0_0001=-0.4964,
        limit=None,
    ),
    "inverse_auprc": GammaRow(
        gamma_0_499=-0.5, gamma_0_1=-0.4999, gamma_0_01=-0.5002, gamma_0_001=-0.4988, gamma_0_0001=-0.4996,
        limit=None,
    ),
}
#: Paper 000, Table C.4: mean Δs of the theoretical extra-labels test per γ and ``lim γ→0``, as printed (the
#: Cosine cell at γ = 0.0001 is printed positive, +0.1456, beside −0.1464 in every other column: kept as printed).
TABLE_C4: dict[str, GammaRow] = {
    "recall": GammaRow(
        gamma_0_499=0.0, gamma_0_1=0.0, gamma_0_01=0.0, gamma_0_001=0.0, gamma_0_0001=0.0, limit=0.0,
    ),
    "precision": GammaRow(
        gamma_0_499=-0.5, gamma_0_1=-0.5001, gamma_0_01=-0.4999, gamma_0_001=-0.4993, gamma_0_0001=-0.4963,
        limit=-0.5,
    ),
    "f1": GammaRow(
        gamma_0_499=-0.3333, gamma_0_1=-0.3334, gamma_0_01=-0.3334, gamma_0_001=-0.3336, gamma_0_0001=-0.3333,
        limit=-0.3333,
    ),
    "iou": GammaRow(
        gamma_0_499=-0.5, gamma_0_1=-0.5, gamma_0_01=-0.5001, gamma_0_001=-0.4997, gamma_0_0001=-0.497, limit=-0.5,
    ),
    "accuracy": GammaRow(
        gamma_0_499=-0.499, gamma_0_1=-0.1, gamma_0_01=-0.01, gamma_0_001=-0.001, gamma_0_0001=-0.0001, limit=0.0,
    ),
    "balanced_accuracy": GammaRow(
        gamma_0_499=-0.498, gamma_0_1=-0.0556, gamma_0_01=-0.0051, gamma_0_001=-0.0005, gamma_0_0001=0.0, limit=0.0,
    ),
    "inverse_balanced_accuracy": GammaRow(
        gamma_0_499=-0.25, gamma_0_1=-0.25, gamma_0_01=-0.25, gamma_0_001=-0.25, gamma_0_0001=-0.2483, limit=-0.25,
    ),
    "auc": GammaRow(
        gamma_0_499=-0.7562, gamma_0_1=-0.0844, gamma_0_01=-0.0077, gamma_0_001=-0.0008, gamma_0_0001=-0.0001,
        limit=None,
    ),
    "inverse_auc": GammaRow(
        gamma_0_499=-0.25, gamma_0_1=-0.25, gamma_0_01=-0.2501, gamma_0_001=-0.25, gamma_0_0001=-0.2491, limit=None,
    ),
    "correlation": GammaRow(
        gamma_0_499=-0.4777, gamma_0_1=-0.1667, gamma_0_01=-0.1483, gamma_0_001=-0.1465, gamma_0_0001=-0.1461,
        limit=None,
    ),
    "correlation_tr": GammaRow(
        gamma_0_499=-0.4929, gamma_0_1=-0.0293, gamma_0_01=-0.0027, gamma_0_001=-0.0002, gamma_0_0001=0.0, limit=None,
    ),
    "spearman": GammaRow(
        gamma_0_499=-0.5672, gamma_0_1=-0.0238, gamma_0_01=-0.0007, gamma_0_001=-0.0002, gamma_0_0001=-0.0018,
        limit=None,
    ),
    "spearman_tr": GammaRow(
        gamma_0_499=0.0002, gamma_0_1=0.0, gamma_0_01=-0.0036, gamma_0_001=0.0307, gamma_0_0001=-0.0064, limit=None,
    ),
    "cosine": GammaRow(
        gamma_0_499=-0.1464, gamma_0_1=-0.1464, gamma_0_01=-0.1463, gamma_0_001=-0.1464, gamma_0_0001=0.1456,
        limit=None,
    ),
    "wpmi": GammaRow(
        gamma_0_499=-0.0292, gamma_0_1=-0.0292, gamma_0_01=-0.0292, gamma_0_001=-0.0293, gamma_0_0001=-0.0292,
        limit=None,
    ),
    "mad": GammaRow(
        gamma_0_499=-0.3324, gamma_0_1=-0.3324, gamma_0_01=-0.3324, gamma_0_001=-0.3321, gamma_0_0001=-0.3298,
        limit=None,
    ),
    "auprc": GammaRow(
        gamma_0_499=-0.5, gamma_0_1=-0.5, gamma_0_01=-0.4999, gamma_0_001=-0.4998, gamma_0_0001=-0.4974, limit=None,
    ),
    "inverse_auprc": GammaRow(
        gamma_0_499=-0.001, gamma_0_1=-0.4, gamma_0_01=-0.4899, gamma_0_001=-0.4984, gamma_0_0001=-0.4957, limit=None,
    ),
}
#: Paper 000, Table D.2: Δs of the ideal unit a = c (p = 0.5 missing, p = 1 extra), the printed closed forms.
TABLE_D2: dict[str, ClosedFormRow] = {
    "recall": ClosedFormRow(missing_text="-0.5", extra_text="0", missing=lambda g: -0.5, extra=lambda g: 0.0),
    "precision": ClosedFormRow(missing_text="0", extra_text="-0.5", missing=lambda g: 0.0, extra=lambda g: -0.5),
    "f1": ClosedFormRow(missing_text="-1/3", extra_text="-1/3", missing=lambda g: -1 / 3, extra=lambda g: -1 / 3),
    "iou": ClosedFormRow(missing_text="-0.5", extra_text="-0.5", missing=lambda g: -0.5, extra=lambda g: -0.5),
    "accuracy": ClosedFormRow(missing_text="-γ/2", extra_text="-γ", missing=lambda g: -g / 2, extra=lambda g: -g),
    "balanced_accuracy": ClosedFormRow(
        missing_text="-0.25", extra_text="-γ/(2(1-γ))", missing=lambda g: -0.25, extra=lambda g: -g / (2 * (1 - g)),
    ),
    "inverse_balanced_accuracy": ClosedFormRow(
        missing_text="-γ/(2(2-γ))", extra_text="-0.25", missing=lambda g: -g / (2 * (2 - g)), extra=lambda g: -0.25,
    ),
}
