"""The papers' published numbers that the fidelity report sets ours beside, typed in from the seed text.

Each constant names the table it comes from. Metric names are the registry names of
:mod:`neuroneval.metrics`; the papers print percentages, these are fractions where the paper's quantity is a
fraction (Decrease Acc), and the printed value otherwise.
"""

from __future__ import annotations

#: Paper 000, Table 3 (Meta-Evaluation #1): Decrease Acc of the Missing and Extra Labels tests,
#: (experimental missing, theoretical missing, experimental extra, theoretical extra), and the pass mark.
TABLE3: dict[str, tuple[float, float, float, float, bool]] = {
    "recall": (0.9866, 1.0, 0.0, 0.0, False),
    "precision": (0.4573, 0.0, 0.9981, 1.0, False),
    "f1": (0.9368, 1.0, 0.9982, 1.0, True),
    "iou": (0.9362, 1.0, 0.9981, 1.0, True),
    "accuracy": (0.2379, 0.60, 0.7037, 0.6968, False),
    "balanced_accuracy": (0.9865, 1.0, 0.5367, 0.60, False),
    "inverse_balanced_accuracy": (0.6418, 0.60, 0.9950, 1.0, False),
    "auc": (0.9496, 1.0, 0.5918, 0.60, False),
    "inverse_auc": (0.5281, 0.60, 0.9999, 1.0, False),
    "correlation": (0.9941, 1.0, 0.9992, 1.0, True),
    "correlation_tr": (0.8783, 1.0, 0.6026, 0.4364, False),
    "spearman": (0.6405, 0.6720, 0.4921, 0.4408, False),
    "spearman_tr": (0.8004, 1.0, 0.5981, 0.1968, False),
    "cosine": (0.9945, 1.0, 0.9926, 1.0, True),
    "wpmi": (0.9589, 1.0, 0.5884, 1.0, False),
    "mad": (0.5981, 0.60, 0.9934, 1.0, False),
    "auprc": (0.9561, 1.0, 0.9946, 1.0, True),
    "inverse_auprc": (0.9915, 1.0, 0.9558, 0.8954, False),
}

#: Paper 000, Table 4: (average meta-AUPRC, average rank) over its settings; F1 and IoU share a row.
TABLE4: dict[str, tuple[float, float]] = {
    "recall": (0.6722, 11.30),
    "precision": (0.8039, 7.90),
    "f1": (0.8140, 6.70),
    "iou": (0.8140, 6.70),
    "accuracy": (0.7215, 10.80),
    "balanced_accuracy": (0.7979, 7.30),
    "inverse_balanced_accuracy": (0.8087, 7.10),
    "auc": (0.7652, 11.00),
    "inverse_auc": (0.7569, 10.90),
    "correlation": (0.8765, 1.60),
    "correlation_tr": (0.6606, 10.70),
    "spearman": (0.0853, 16.20),
    "spearman_tr": (0.3418, 15.40),
    "cosine": (0.8666, 2.30),
    "wpmi": (0.7999, 7.30),
    "mad": (0.6952, 8.80),
    "auprc": (0.8406, 3.90),
    "inverse_auprc": (0.6904, 9.30),
}

#: Paper 000, Tables F.5–F.7: best meta-AUPRC of any metric per setting (App. F.2 numbering), and the
#: metric(s) that reach it.
BEST_PER_SETTING: dict[int, tuple[float, tuple[str, ...], str]] = {
    1: (0.9999, ("inverse_auprc",), "F.5"),
    2: (0.9866, ("auprc",), "F.5"),
    3: (0.9399, ("correlation",), "F.5"),
    4: (0.7511, ("auprc",), "F.5"),
    5: (0.9693, ("correlation", "cosine"), "F.6"),
    6: (0.8669, ("auprc",), "F.6"),
    7: (0.8985, ("cosine",), "F.6"),
    8: (0.4683, ("correlation",), "F.6"),
    9: (0.9918, ("correlation",), "F.7"),
    10: (0.9986, ("correlation",), "F.7"),
}

#: Paper 000, Table E.2 (setting 7, CUB CBM, sigmoid activations + 1): cosine meta-AUPRC before and after.
SHIFT_COSINE: tuple[float, float] = (0.8985, 0.0443)
#: ... and correlation, unchanged by the shift.
SHIFT_CORRELATION: tuple[float, float] = (0.8883, 0.8883)

#: Paper 001 (abstract, Sec. 4.1, Fig. 2a): labelling-cost reduction of pseudo-label importance sampling over
#: uniform sampling at equal correlation error, on ImageNet units (one class ≈ 0.1 % of the inputs).
CROWD_IS_FACTOR = 30.0
#: Paper 001 (abstract, Sec. 4.2, Fig. 3a): further reduction from Bayesian aggregation with a pseudo-label
#: prior over majority vote.
CROWD_BAYES_FACTOR = 5.0

#: Paper 002, Table 2: mean AUC of true explanations and of random explanations, per ImageNet model.
COSY_TRUE_RANDOM_AUC: dict[str, tuple[float, float]] = {
    "ResNet18": (0.98, 0.47),
    "DenseNet161": (0.99, 0.44),
    "GoogLeNet": (0.99, 0.48),
    "ViT-B/16": (0.99, 0.49),
}

#: Paper 004, Fig. 2 / Sec. 5.2.1: the minimal acceptable reliability (Nunnally and Bernstein, 1994), red line.
CONCEPTEVAL_RELIABLE = 0.9
#: Paper 004, Sec. 5.2.1 (Fig. 2): measures the text calls unreliable, by statistic. Test-retest: only LLM-Score
#: (ours: SIM-Corr); subset consistency: GRAD-Loss, IN-UCI and IN-UMass. Every other measure passes 0.9.
CONCEPTEVAL_UNRELIABLE: dict[str, tuple[str, ...]] = {
    "test-retest": ("SIM-Corr",),
    "cronbach_alpha": ("GRAD-Loss", "IN-UCI", "IN-UMass"),
}
#: Paper 004, Table 3: Kendall τ between the three experts, (input, output, average) per pair.
CONCEPTEVAL_INTER_RATER: dict[str, tuple[float, float, float]] = {
    "Expert1 & Expert2": (0.81, 0.77, 0.79),
    "Expert1 & Expert3": (0.76, 0.75, 0.76),
    "Expert2 & Expert3": (0.74, 0.72, 0.73),
}
#: Paper 004, Table 4: Kendall τ of each readability measure with human input (IR) and output (OR) readability;
#: LLM-Score is the simulation-based score (ours: SIM-Corr).
CONCEPTEVAL_VALIDITY_KENDALL: dict[str, tuple[float, float]] = {
    "SIM-Corr": (0.54, 0.09),
    "IN-EmbDist": (0.19, 0.12),
    "IN-EmbCos": (0.56, 0.18),
    "OUT-EmbDist": (0.15, 0.63),
    "OUT-EmbCos": (0.17, 0.67),
}
#: Paper 004, Sec. 5.2.2 (Fig. 3): |τ| between faithfulness and readability measures lies in 0.0–0.3 (divergent),
#: between input- and output-side readability below 0.15, and among faithfulness measures averages ≈ 0.5
#: (convergent).
CONCEPTEVAL_DIVERGENT_MAX = 0.3
CONCEPTEVAL_SIDES_MAX = 0.15
CONCEPTEVAL_CONVERGENT_MEAN = 0.5
#: Paper 004, Sec. 5.3 (Fig. 4): on every representative measure, TCAV (probe) > sparse autoencoder > neuron.
CONCEPTEVAL_METHOD_ORDER: tuple[str, ...] = ("probe", "sae", "neuron")
#: Paper 001, Table 1 (SigLIP simulation correlation, simple explanations l = 1): method → (RN-50 layer4,
#: ViT-B-16 layer11 MLP). ND = Network Dissection, CD = CLIP-Dissect.
EXPLAIN_TABLE1: dict[str, tuple[float, float]] = {
    "ND": (0.1242, 0.0335),
    "MILAN": (0.0920, 0.0194),
    "CD": (0.1904, 0.1849),
    "INVERT l=1": (0.1867, 0.1343),
    "DnD": (0.1534, 0.1049),
    "MAIA": (0.1396, 0.1497),
    "LE(label) l=1": (0.1793, 0.2704),
    "LE(SigLIP) l=1": (0.2413, 0.2968),
}
#: Paper 001, Table 2 (complex explanations l > 1), the same two models.
EXPLAIN_TABLE2: dict[str, tuple[float, float]] = {
    "CompExp l=3": (0.1399, 0.0468),
    "INVERT l=3": (0.2341, 0.1101),
    "CCE l=5": (0.0993, 0.0534),
    "CCE l=15": (0.1510, 0.0570),
    "LE(label)": (0.2924, 0.3243),
    "LE(SigLIP)": (0.3772, 0.3489),
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
