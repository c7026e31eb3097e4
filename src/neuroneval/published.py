"""The papers' published numbers, typed in from the seed text, each record named after the table it comes from.

A low-level module (it imports nothing of the package): :mod:`neuroneval.explain` reads the pass set of paper 000's
Table 3 from here and :mod:`neuroneval.fidelity` sets every number beside ours, so neither package imports the
other for a paper's value. Metric names are the registry names of :mod:`neuroneval.metrics`; the papers print
percentages, these are fractions where the paper's quantity is a fraction (Decrease Acc), and the printed value
otherwise. Every row is a frozen record read by field name.
"""

from __future__ import annotations

from dataclasses import dataclass

from neuroneval.published_appendix import (  # noqa: F401  (paper 000's appendix tables, read here too)
    TABLE_C1,
    TABLE_C2,
    TABLE_C3,
    TABLE_C4,
    TABLE_C_GAMMAS,
    TABLE_D2,
    ClosedFormRow,
    GammaRow,
)


@dataclass(frozen=True)
class SanityRow:
    """Paper 000, Table 3 (Meta-Evaluation #1): one metric's Decrease Acc per test and its pass mark."""

    experimental_missing: float
    theoretical_missing: float
    experimental_extra: float
    theoretical_extra: float
    passes: bool


@dataclass(frozen=True)
class RankingRow:
    """Paper 000, Table 4: one metric's average meta-AUPRC and average rank over the paper's settings."""

    mean_auprc: float
    mean_rank: float


@dataclass(frozen=True)
class SettingBest:
    """Paper 000, Tables F.5–F.7: the best meta-AUPRC of any metric in one setting, who reaches it, and where."""

    meta_auprc: float
    metrics: tuple[str, ...]
    table: str


@dataclass(frozen=True)
class BeforeAfter:
    """Paper 000, Table E.2: a metric's meta-AUPRC before and after the +1 activation shift."""

    before: float
    after: float


@dataclass(frozen=True)
class TrueRandomAuc:
    """Paper 002, Table 2: mean AUC of the true explanations and of random ones on one model."""

    true_auc: float
    random_auc: float


@dataclass(frozen=True)
class RaterAgreement:
    """Paper 004, Table 3: Kendall τ between two experts on input and output readability, and their average."""

    input_readability: float
    output_readability: float
    average: float


@dataclass(frozen=True)
class ReadabilityValidity:
    """Paper 004, Table 4: Kendall τ of a measure with human input (IR) and output (OR) readability."""

    input_readability: float
    output_readability: float


@dataclass(frozen=True)
class SimulationByModel:
    """Paper 001, Tables 1–2: SigLIP simulation correlation on ResNet-50 layer4 and on ViT-B-16 layer11 (MLP)."""

    resnet50: float
    vit_b16: float

    @property
    def mean(self) -> float:
        """The mean over the two models."""
        return (self.resnet50 + self.vit_b16) / 2


#: The two models of paper 001's Tables 1–2, as printed, with the field of :class:`SimulationByModel` for each.
SIMULATION_MODELS: tuple[tuple[str, str], ...] = (("RN-50", "resnet50"), ("ViT-B-16", "vit_b16"))

#: Paper 000, Table 3: Decrease Acc of the Missing and Extra Labels tests and the pass mark, per metric.
TABLE3: dict[str, SanityRow] = {
    "recall": SanityRow(
        experimental_missing=0.9866, theoretical_missing=1.0, experimental_extra=0.0, theoretical_extra=0.0,
        passes=False,
    ),
    "precision": SanityRow(
        experimental_missing=0.4573, theoretical_missing=0.0, experimental_extra=0.9981, theoretical_extra=1.0,
        passes=False,
    ),
    "f1": SanityRow(
        experimental_missing=0.9368, theoretical_missing=1.0, experimental_extra=0.9982, theoretical_extra=1.0,
        passes=True,
    ),
    "iou": SanityRow(
        experimental_missing=0.9362, theoretical_missing=1.0, experimental_extra=0.9981, theoretical_extra=1.0,
        passes=True,
    ),
    "accuracy": SanityRow(
        experimental_missing=0.2379, theoretical_missing=0.60, experimental_extra=0.7037, theoretical_extra=0.6968,
        passes=False,
    ),
    "balanced_accuracy": SanityRow(
        experimental_missing=0.9865, theoretical_missing=1.0, experimental_extra=0.5367, theoretical_extra=0.60,
        passes=False,
    ),
    "inverse_balanced_accuracy": SanityRow(
        experimental_missing=0.6418, theoretical_missing=0.60, experimental_extra=0.9950, theoretical_extra=1.0,
        passes=False,
    ),
    "auc": SanityRow(
        experimental_missing=0.9496, theoretical_missing=1.0, experimental_extra=0.5918, theoretical_extra=0.60,
        passes=False,
    ),
    "inverse_auc": SanityRow(
        experimental_missing=0.5281, theoretical_missing=0.60, experimental_extra=0.9999, theoretical_extra=1.0,
        passes=False,
    ),
    "correlation": SanityRow(
        experimental_missing=0.9941, theoretical_missing=1.0, experimental_extra=0.9992, theoretical_extra=1.0,
        passes=True,
    ),
    "correlation_tr": SanityRow(
        experimental_missing=0.8783, theoretical_missing=1.0, experimental_extra=0.6026, theoretical_extra=0.4364,
        passes=False,
    ),
    "spearman": SanityRow(
        experimental_missing=0.6405, theoretical_missing=0.6720, experimental_extra=0.4921, theoretical_extra=0.4408,
        passes=False,
    ),
    "spearman_tr": SanityRow(
        experimental_missing=0.8004, theoretical_missing=1.0, experimental_extra=0.5981, theoretical_extra=0.1968,
        passes=False,
    ),
    "cosine": SanityRow(
        experimental_missing=0.9945, theoretical_missing=1.0, experimental_extra=0.9926, theoretical_extra=1.0,
        passes=True,
    ),
    "wpmi": SanityRow(
        experimental_missing=0.9589, theoretical_missing=1.0, experimental_extra=0.5884, theoretical_extra=1.0,
        passes=False,
    ),
    "mad": SanityRow(
        experimental_missing=0.5981, theoretical_missing=0.60, experimental_extra=0.9934, theoretical_extra=1.0,
        passes=False,
    ),
    "auprc": SanityRow(
        experimental_missing=0.9561, theoretical_missing=1.0, experimental_extra=0.9946, theoretical_extra=1.0,
        passes=True,
    ),
    "inverse_auprc": SanityRow(
        experimental_missing=0.9915, theoretical_missing=1.0, experimental_extra=0.9558, theoretical_extra=0.8954,
        passes=False,
    ),
}

#: The metrics that pass both sanity tests in paper 000's Table 3, in the table's order.
TABLE3_PASSING: tuple[str, ...] = tuple(metric for metric, row in TABLE3.items() if row.passes)

#: Paper 000, Table 4: average meta-AUPRC and average rank over its settings; F1 and IoU share a row.
TABLE4: dict[str, RankingRow] = {
    "recall": RankingRow(mean_auprc=0.6722, mean_rank=11.30),
    "precision": RankingRow(mean_auprc=0.8039, mean_rank=7.90),
    "f1": RankingRow(mean_auprc=0.8140, mean_rank=6.70),
    "iou": RankingRow(mean_auprc=0.8140, mean_rank=6.70),
    "accuracy": RankingRow(mean_auprc=0.7215, mean_rank=10.80),
    "balanced_accuracy": RankingRow(mean_auprc=0.7979, mean_rank=7.30),
    "inverse_balanced_accuracy": RankingRow(mean_auprc=0.8087, mean_rank=7.10),
    "auc": RankingRow(mean_auprc=0.7652, mean_rank=11.00),
    "inverse_auc": RankingRow(mean_auprc=0.7569, mean_rank=10.90),
    "correlation": RankingRow(mean_auprc=0.8765, mean_rank=1.60),
    "correlation_tr": RankingRow(mean_auprc=0.6606, mean_rank=10.70),
    "spearman": RankingRow(mean_auprc=0.0853, mean_rank=16.20),
    "spearman_tr": RankingRow(mean_auprc=0.3418, mean_rank=15.40),
    "cosine": RankingRow(mean_auprc=0.8666, mean_rank=2.30),
    "wpmi": RankingRow(mean_auprc=0.7999, mean_rank=7.30),
    "mad": RankingRow(mean_auprc=0.6952, mean_rank=8.80),
    "auprc": RankingRow(mean_auprc=0.8406, mean_rank=3.90),
    "inverse_auprc": RankingRow(mean_auprc=0.6904, mean_rank=9.30),
}

#: Paper 000, Tables F.5–F.7: best meta-AUPRC of any metric per setting (App. F.2 numbering).
BEST_PER_SETTING: dict[int, SettingBest] = {
    1: SettingBest(meta_auprc=0.9999, metrics=("inverse_auprc",), table="F.5"),
    2: SettingBest(meta_auprc=0.9866, metrics=("auprc",), table="F.5"),
    3: SettingBest(meta_auprc=0.9399, metrics=("correlation",), table="F.5"),
    4: SettingBest(meta_auprc=0.7511, metrics=("auprc",), table="F.5"),
    5: SettingBest(meta_auprc=0.9693, metrics=("correlation", "cosine"), table="F.6"),
    6: SettingBest(meta_auprc=0.8669, metrics=("auprc",), table="F.6"),
    7: SettingBest(meta_auprc=0.8985, metrics=("cosine",), table="F.6"),
    8: SettingBest(meta_auprc=0.4683, metrics=("correlation",), table="F.6"),
    9: SettingBest(meta_auprc=0.9918, metrics=("correlation",), table="F.7"),
    10: SettingBest(meta_auprc=0.9986, metrics=("correlation",), table="F.7"),
}

#: Paper 000, Table E.2 (setting 7, CUB CBM, sigmoid activations + 1): cosine meta-AUPRC before and after.
SHIFT_COSINE = BeforeAfter(before=0.8985, after=0.0443)
#: ... and correlation, unchanged by the shift.
SHIFT_CORRELATION = BeforeAfter(before=0.8883, after=0.8883)

#: Paper 001 (abstract, Sec. 4.1, Fig. 2a): labelling-cost reduction of pseudo-label importance sampling over
#: uniform sampling at equal correlation error, on ImageNet units explained by class and superclass labels (001
#: prints no concept rarity; "one class ≈ 0.1 % of the inputs" is paper 000's note, App. F.1).
CROWD_IS_FACTOR = 30.0
#: Paper 001 (abstract, Sec. 4.2, Fig. 3a): further reduction from Bayesian aggregation with a pseudo-label
#: prior over majority vote.
CROWD_BAYES_FACTOR = 5.0

#: Paper 002, Table 2: mean AUC of true explanations and of random explanations, per ImageNet model.
COSY_TRUE_RANDOM_AUC: dict[str, TrueRandomAuc] = {
    "ResNet18": TrueRandomAuc(true_auc=0.98, random_auc=0.47),
    "DenseNet161": TrueRandomAuc(true_auc=0.99, random_auc=0.44),
    "GoogLeNet": TrueRandomAuc(true_auc=0.99, random_auc=0.48),
    "ViT-B/16": TrueRandomAuc(true_auc=0.99, random_auc=0.49),
}

#: Paper 004, Fig. 2 / Sec. 5.2.1: the minimal acceptable reliability (Nunnally and Bernstein, 1994), red line.
CONCEPTEVAL_RELIABLE = 0.9
#: Paper 004, Sec. 5.2.1 (Fig. 2): measures the text calls unreliable, by statistic. Test-retest: only LLM-Score
#: (ours: SIM-Corr); subset consistency: GRAD-Loss, IN-UCI and IN-UMass. Every other measure passes 0.9.
CONCEPTEVAL_UNRELIABLE: dict[str, tuple[str, ...]] = {
    "test-retest": ("SIM-Corr",),
    "cronbach_alpha": ("GRAD-Loss", "IN-UCI", "IN-UMass"),
}
#: Paper 004, Table 3: Kendall τ between the three experts, per pair.
CONCEPTEVAL_INTER_RATER: dict[str, RaterAgreement] = {
    "Expert1 & Expert2": RaterAgreement(input_readability=0.81, output_readability=0.77, average=0.79),
    "Expert1 & Expert3": RaterAgreement(input_readability=0.76, output_readability=0.75, average=0.76),
    "Expert2 & Expert3": RaterAgreement(input_readability=0.74, output_readability=0.72, average=0.73),
}
#: Paper 004, Table 4: Kendall τ of each readability measure with human input and output readability;
#: LLM-Score is the simulation-based score (ours: SIM-Corr).
CONCEPTEVAL_VALIDITY_KENDALL: dict[str, ReadabilityValidity] = {
    "SIM-Corr": ReadabilityValidity(input_readability=0.54, output_readability=0.09),
    "IN-EmbDist": ReadabilityValidity(input_readability=0.19, output_readability=0.12),
    "IN-EmbCos": ReadabilityValidity(input_readability=0.56, output_readability=0.18),
    "OUT-EmbDist": ReadabilityValidity(input_readability=0.15, output_readability=0.63),
    "OUT-EmbCos": ReadabilityValidity(input_readability=0.17, output_readability=0.67),
}
#: Paper 004, Sec. 5.2.2 (Fig. 3): |τ| between faithfulness and readability measures lies in 0.0–0.3 (divergent),
#: between input- and output-side readability below 0.15, and among faithfulness measures averages ≈ 0.5
#: (convergent).
CONCEPTEVAL_DIVERGENT_MAX = 0.3
CONCEPTEVAL_SIDES_MAX = 0.15
CONCEPTEVAL_CONVERGENT_MEAN = 0.5
#: Paper 004, Sec. 5.3 (Fig. 4): on every representative measure, TCAV (probe) > sparse autoencoder > neuron.
CONCEPTEVAL_METHOD_ORDER: tuple[str, ...] = ("probe", "sae", "neuron")
#: Paper 001, Table 1 (SigLIP simulation correlation, simple explanations l = 1), per method. ND = Network
#: Dissection, CD = CLIP-Dissect.
EXPLAIN_TABLE1: dict[str, SimulationByModel] = {
    "ND": SimulationByModel(resnet50=0.1242, vit_b16=0.0335),
    "MILAN": SimulationByModel(resnet50=0.0920, vit_b16=0.0194),
    "CD": SimulationByModel(resnet50=0.1904, vit_b16=0.1849),
    "INVERT l=1": SimulationByModel(resnet50=0.1867, vit_b16=0.1343),
    "DnD": SimulationByModel(resnet50=0.1534, vit_b16=0.1049),
    "MAIA": SimulationByModel(resnet50=0.1396, vit_b16=0.1497),
    "LE(label) l=1": SimulationByModel(resnet50=0.1793, vit_b16=0.2704),
    "LE(SigLIP) l=1": SimulationByModel(resnet50=0.2413, vit_b16=0.2968),
}
#: Paper 001, Table 2 (complex explanations l > 1), the same two models.
EXPLAIN_TABLE2: dict[str, SimulationByModel] = {
    "CompExp l=3": SimulationByModel(resnet50=0.1399, vit_b16=0.0468),
    "INVERT l=3": SimulationByModel(resnet50=0.2341, vit_b16=0.1101),
    "CCE l=5": SimulationByModel(resnet50=0.0993, vit_b16=0.0534),
    "CCE l=15": SimulationByModel(resnet50=0.1510, vit_b16=0.0570),
    "LE(label)": SimulationByModel(resnet50=0.2924, vit_b16=0.3243),
    "LE(SigLIP)": SimulationByModel(resnet50=0.3772, vit_b16=0.3489),
}
#: Paper 001, Table 3 (MTurk study, 100 neurons per model): the average correlation over both models and both
#: Bayes aggregations, per method (its last row).
EXPLAIN_CROWD_AVERAGE: dict[str, float] = {
    "CD": 0.1601,
    "INVERT l=1": 0.1219,
    "DnD": 0.1201,
    "MAIA": 0.1245,
    "LE(SigLIP) l=1": 0.1946,
}
#: Paper 001's Broden-concept methods (their concept sets lack high-level concepts such as animal species).
BRODEN_METHODS_001: tuple[str, ...] = ("ND", "CompExp l=3", "CCE l=5", "CCE l=15")
#: Paper 002, Table 3: lowest mean CoSy AUC of INVERT and of CLIP-Dissect over its six models (DINO ViT-S/8 and
#: ViT-B/16), and MILAN's highest.
COSY_BENCHMARK_AUC: dict[str, float] = {"INVERT": 0.73, "CLIP-Dissect": 0.78, "MILAN": 0.65}
