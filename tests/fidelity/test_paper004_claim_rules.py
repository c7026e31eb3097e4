"""Paper 004's claims (``fidelity.claims.paper_004``), rule by rule, at the edges a reader relies on.

Pinned here:

- Which rows each claim reads: the model's own rows in every table (other models' names sort before and after it);
  Cronbach's α rows for subset consistency and GRAD-Loss's α, ``run == "test-retest"`` rows for test-retest
  (statistics that sort before and after ``cronbach_alpha`` are left alone); the lower α run with its subset-noise
  columns; Kendall τ rows between two different measures for the MTMM blocks; ``raters`` Kendall rows for validity
  (other criteria and statistics, placed first, are left alone).
- Reliability: the measures below 0.9 listed in the table's order (``none`` when there are none); the reason empty
  when the claim holds and naming each misplaced measure when not; within noise when every misplaced measure's
  interval contains 0.9 (ends exactly at 0.9 count); a test-retest r of 1 (to 1e-12: 1 − 1e-13 counts, 0.999 does
  not) leaves an unreliable measure untested, an α of 1 does not.
- GRAD-Loss vs ABL: GRAD-Loss's α must be below 0.9 (0.9 fails), the weakest ABL value must reach 0.9 (0.9
  passes); each noise condition with the interval's end exactly at, just below and just above 0.9; the reason
  texts for each side.
- The subset-noise reason of a low α: GRAD-Loss's agreement beside another measure (not beside itself, nor when
  GRAD-Loss has none), the measures with α ≥ 0.9 (one exactly at 0.9 included), read from the lower run's α rows.
- MTMM: each unordered pair counted once whether stored in either order or both, pairs without τ dropped, a block
  without pairs not testable (the other blocks still judged), the reasons (empty when holding, the interval named
  only when it reaches the rule).
- Validity: either EmbCos measure may lead; reasons, and noise judged against the best EmbCos measure only.
- Methods: equal values (or equal magnitudes on faithfulness) are not ordered; readability compares the signed
  mean; noise needs every reversed pair to overlap; a missing family skips only its own comparisons; the
  planted-alignment premise only when both families have one.
- ``source`` is keyword-only.

Expected values are written by hand here, never read back from the code under test.
"""

from __future__ import annotations

import pandas as pd
import pytest

from neuroneval.fidelity import claims as fc

NAN = float("nan")
EPS = 1e-4
MODEL = "lm"

#: Table order, on purpose not alphabetical: the claims list measures in the order of the table.
MEASURES = ("SIM-Corr", "IN-UCI", "IN-UMass", "IN-EmbCos", "OUT-EmbCos", "GRAD-Loss", "ABL-Div")
#: Test-retest r per measure: only the simulation score below 0.9 (the paper's finding).
RETEST = {m: 0.95 for m in MEASURES} | {"SIM-Corr": 0.5}
#: α of the lower (retest) run per measure; the test run is 0.01 higher. Exactly the paper's three below 0.9.
ALPHA = {m: 0.95 for m in MEASURES} | {"GRAD-Loss": 0.49, "IN-UCI": 0.79, "IN-UMass": 0.84}
#: Kendall τ between measures (stored in both orders): faithfulness/readability |τ| 0.1, 0.2, 0.0, 0.1
#: (mean 0.1), IN/OUT 0.1, GRAD/ABL 0.5.
TAUS = {("ABL-Div", "GRAD-Loss"): 0.5, ("ABL-Div", "IN-EmbCos"): 0.1, ("ABL-Div", "OUT-EmbCos"): -0.2,
        ("GRAD-Loss", "IN-EmbCos"): 0.0, ("GRAD-Loss", "OUT-EmbCos"): 0.1, ("IN-EmbCos", "OUT-EmbCos"): 0.1}
#: τ with the (simulated) ratings: IN-EmbCos is the best.
RATINGS = {"SIM-Corr": 0.3, "IN-EmbDist": 0.1, "IN-EmbCos": 0.5, "OUT-EmbDist": 0.2, "OUT-EmbCos": 0.45}
#: Family means: probe > sae > neuron (|mean| on ABL-Div, mean on IN-EmbCos); random is the floor, not judged.
MEANS = {("probe", "ABL-Div"): -0.3, ("sae", "ABL-Div"): 0.2, ("neuron", "ABL-Div"): -0.1,
         ("random", "ABL-Div"): 0.9, ("probe", "IN-EmbCos"): 0.6, ("sae", "IN-EmbCos"): 0.5,
         ("neuron", "IN-EmbCos"): 0.4, ("random", "IN-EmbCos"): 0.9}

RETEST_CLAIM = "every measure but the simulation-based score passes test-retest 0.9"
ALPHA_CLAIM = "subset consistency (α, both runs) passes 0.9 except GRAD-Loss, IN-UCI, IN-UMass"
FAITHFUL_CLAIM = "GRAD-Loss is the unreliable faithfulness measure (α < 0.9); every ABL measure reaches 0.9"
DIVERGENT_CLAIM = "faithfulness and readability measures diverge (mean |τ| ≤ 0.3)"
SIDES_CLAIM = "input- and output-side readability diverge (mean |τ| < 0.15)"
CONVERGENT_CLAIM = "faithfulness measures converge moderately (mean |τ| ≈ 0.5, within ±0.2)"
VALIDITY_CLAIM = ("an EmbCos measure has the highest Kendall τ with the ratings, above the simulation score (judged "
                  "against simulated raters)")
DETERMINISTIC_REASON = ("not testable for SIM-Corr: it reproduces itself exactly (r = 1) because the offline "
                        "simulator is deterministic, where the paper's unreliability comes from the LLM's sampling")
BOOTSTRAP_REACHES = "the bootstrap intervals reach the other side of 0.9"

#: The base tables' claims for one model, in order: (claim after "<model>: ", our_value); every one holds.
BASE = [
    (RETEST_CLAIM, "below 0.9: SIM-Corr 0.500 (of 7 measures)"),
    (ALPHA_CLAIM, "below 0.9: IN-UCI 0.790, IN-UMass 0.840, GRAD-Loss 0.490 (of 7 measures)"),
    (FAITHFUL_CLAIM, "GRAD-Loss α 0.490 (lower run); weakest ABL value 0.950 (ABL-Div, test-retest)"),
    (DIVERGENT_CLAIM, "mean |τ| 0.100 over 4 pairs"),
    (SIDES_CLAIM, "mean |τ| 0.100 over 1 pairs"),
    (CONVERGENT_CLAIM, "mean |τ| 0.500 over 1 pairs"),
    (VALIDITY_CLAIM, "τ with simulated ratings: SIM-Corr 0.300; IN-EmbDist 0.100; IN-EmbCos 0.500; OUT-EmbDist "
                     "0.200; OUT-EmbCos 0.450"),
    ("sae concepts score above neuron concepts on every representative measure",
     "ABL-Div 0.2 vs -0.1; IN-EmbCos 0.5 vs 0.4"),
    ("probe concepts score above sae concepts on every representative measure",
     "ABL-Div -0.3 vs 0.2; IN-EmbCos 0.6 vs 0.5"),
    ("probe concepts score above neuron concepts on every representative measure",
     "ABL-Div -0.3 vs -0.1; IN-EmbCos 0.6 vs 0.4"),
]

Value = float | tuple[float, float, float]


def _triple(value: Value) -> tuple[float, float, float]:
    """``(value, ci_low, ci_high)``; a bare value has no interval."""
    return value if isinstance(value, tuple) else (value, NAN, NAN)


def _reliability(retest: dict[str, Value] | None = None, alpha: dict[str, Value] | None = None, *,
                 model: str = MODEL, noise: dict[str, float] | None = None) -> pd.DataFrame:
    """Per measure (in the order of ``retest``): a test-retest Pearson row and two α rows, the retest run at the
    given α (with its interval), the test run 0.01 higher (no interval). ``noise`` (sign agreement per measure)
    adds the subset-noise columns to the lower run's rows (median effect 3.3e-5, SD 0.0071); the test run's rows
    carry other figures (agreement 0.99), which no reason may print."""
    retest, alpha = RETEST if retest is None else retest, ALPHA if alpha is None else alpha
    rows = []
    for measure in retest:
        value, low, high = _triple(retest[measure])
        rows.append({"model": model, "measure": measure, "statistic": "pearson", "run": "test-retest",
                     "value": value, "ci_low": low, "ci_high": high})
        value, low, high = _triple(alpha[measure])
        rows.append({"model": model, "measure": measure, "statistic": "cronbach_alpha", "run": "test",
                     "value": value + 0.01, "ci_low": NAN, "ci_high": NAN}
                    | ({"median_effect": 0.5, "subset_sd": 0.001, "sign_agreement": 0.99} if noise else {}))
        rows.append({"model": model, "measure": measure, "statistic": "cronbach_alpha", "run": "retest",
                     "value": value, "ci_low": low, "ci_high": high}
                    | ({"median_effect": 3.3e-5, "subset_sd": 0.0071, "sign_agreement": noise[measure]}
                       if noise else {}))
    return pd.DataFrame(rows)


def _mtmm(taus: dict[tuple[str, str], Value], *, both_orders: bool = True, model: str = MODEL,
          statistic: str = "kendall_tau_b") -> pd.DataFrame:
    """Kendall τ rows per pair (as given, and reversed too when ``both_orders``), α 0.95 on the diagonal."""
    rows = []
    for (a, b), tau in taus.items():
        value, low, high = _triple(tau)
        rows += [{"model": model, "measure_a": x, "measure_b": y, "statistic": statistic, "value": value,
                  "ci_low": low, "ci_high": high} for x, y in ((a, b), (b, a))[:2 if both_orders else 1]]
    names = dict.fromkeys(name for pair in taus for name in pair)
    rows += [{"model": model, "measure_a": m, "measure_b": m, "statistic": "cronbach_alpha", "value": 0.95,
              "ci_low": NAN, "ci_high": NAN} for m in names]
    return pd.DataFrame(rows)


def _validity(values: dict[str, Value], *, model: str = MODEL, criterion: str = "raters",
              statistic: str = "kendall_tau_b") -> pd.DataFrame:
    rows = []
    for measure, tau in values.items():
        value, low, high = _triple(tau)
        rows.append({"model": model, "criterion": criterion, "measure": measure, "statistic": statistic,
                     "value": value, "ci_low": low, "ci_high": high})
    return pd.DataFrame(rows)


def _methods(means: dict[tuple[str, str], Value], *, model: str = MODEL,
             alignment: dict[str, float] | None = None) -> pd.DataFrame:
    rows = []
    for (family, measure), mean in means.items():
        value, low, high = _triple(mean)
        rows.append({"model": model, "family": family, "measure": measure, "mean": value, "ci_low": low,
                     "ci_high": high} | ({"median_alignment": alignment[family]} if alignment else {}))
    return pd.DataFrame(rows)


def _claims(reliability: pd.DataFrame | None = None, *, validity: pd.DataFrame | None = None,
            mtmm: pd.DataFrame | None = None, methods: pd.DataFrame | None = None) -> list[fc.Claim]:
    """The claims of the given tables; a table left out is the base one."""
    return fc.concepteval_claims(
        _reliability() if reliability is None else reliability,
        _validity(RATINGS) if validity is None else validity,
        _mtmm(TAUS) if mtmm is None else mtmm,
        _methods(MEANS) if methods is None else methods)


def _claim(claims: list[fc.Claim], text: str, model: str = MODEL) -> fc.Claim:
    (claim,) = [c for c in claims if c.claim == f"{model}: {text}"]
    return claim


# --- the base tables, models and the source ---------------------------------------------------------------------


def test_the_base_tables_hold_everywhere_with_empty_reasons() -> None:
    """Every claim holds on tables that agree with the paper, with its values listed in the table's order (α:
    IN-UCI, IN-UMass, GRAD-Loss) and an empty reason."""
    claims = _claims()
    assert [(c.claim, c.our_value) for c in claims] == [(f"{MODEL}: {text}", ours) for text, ours in BASE]
    assert {(c.verdict, c.reason) for c in claims} == {("holds", "")}
    assert {c.source for c in claims} == {"results/concepteval/reliability.csv", "results/concepteval/mtmm.csv",
                                          "results/concepteval/validity.csv", "results/concepteval/methods.csv"}


def test_each_model_reads_only_its_own_rows() -> None:
    """A model between two others (one name sorting before it, one after) keeps its own verdicts and figures in
    every table, while the others' rows (each contradicting the paper) are judged for them alone."""
    def models(build, base: pd.DataFrame) -> pd.DataFrame:
        return pd.concat([build("lm-a"), build("lm-c"), base.assign(model="lm-b")], ignore_index=True)

    bad_reliability = {m: 0.1 for m in MEASURES}
    reliability = models(lambda name: _reliability(bad_reliability, bad_reliability, model=name), _reliability())
    mtmm = models(lambda name: _mtmm({pair: 0.9 for pair in TAUS}, model=name), _mtmm(TAUS))
    validity = models(lambda name: _validity(RATINGS | {"SIM-Corr": 0.9}, model=name), _validity(RATINGS))
    reversed_means = {("probe", "ABL-Div"): 0.1, ("sae", "ABL-Div"): 0.2, ("neuron", "ABL-Div"): 0.3,
                      ("probe", "IN-EmbCos"): 0.1, ("sae", "IN-EmbCos"): 0.2, ("neuron", "IN-EmbCos"): 0.3}
    methods = models(lambda name: _methods(reversed_means, model=name), _methods(MEANS))
    claims = fc.concepteval_claims(reliability, validity, mtmm, methods)
    assert len(claims) == 3 * len(BASE)
    middle = [c for c in claims if c.claim.startswith("lm-b: ")]
    assert [(c.claim, c.our_value, c.verdict, c.reason) for c in middle] == [
        (f"lm-b: {text}", ours, "holds", "") for text, ours in BASE]
    for name in ("lm-a", "lm-c"):
        own = [c for c in claims if c.claim.startswith(f"{name}: ")]
        assert [c.verdict for c in own] == ["differs"] * len(BASE)
        assert _claim(own, RETEST_CLAIM, name).our_value == (
            "below 0.9: SIM-Corr 0.100, IN-UCI 0.100, IN-UMass 0.100, IN-EmbCos 0.100, OUT-EmbCos 0.100, "
            "GRAD-Loss 0.100, ABL-Div 0.100 (of 7 measures)")
        assert _claim(own, DIVERGENT_CLAIM, name).our_value == "mean |τ| 0.900 over 4 pairs"
    assert [c.claim.split(": ")[0] for c in claims[::len(BASE)]] == ["lm-a", "lm-c", "lm-b"]  # the table's order


def test_the_source_is_a_keyword_only_prefix() -> None:
    """``source`` prefixes each table's file name and is taken only by name."""
    tables = (_reliability(), _validity(RATINGS), _mtmm(TAUS), _methods(MEANS))
    claims = fc.concepteval_claims(*tables, source="out/")
    assert [c.source for c in claims] == (["out/reliability.csv"] * 3 + ["out/mtmm.csv"] * 3
                                          + ["out/validity.csv"] + ["out/methods.csv"] * 3)
    with pytest.raises(TypeError):
        fc.concepteval_claims(*tables, "out/")


# --- reliability: test-retest and Cronbach's α ---------------------------------------------------------------------


def test_reliability_reads_only_its_statistic_and_run() -> None:
    """Subset consistency reads only ``cronbach_alpha`` rows (a Pearson r of 0.5, and low values of statistics
    sorting before and after ``cronbach_alpha``, are left alone); test-retest reads only the ``test-retest`` run."""
    decoys = pd.DataFrame([
        {"model": MODEL, "measure": "SIM-Corr", "statistic": "agreement", "run": "test", "value": 0.1},
        {"model": MODEL, "measure": "IN-EmbCos", "statistic": "spearman", "run": "test", "value": 0.1},
        {"model": MODEL, "measure": "OUT-EmbCos", "statistic": "pearson", "run": "retest", "value": 0.1},
    ])
    claims = _claims(pd.concat([decoys, _reliability()], ignore_index=True))
    for text, ours in BASE[:3]:
        claim = _claim(claims, text)
        assert (claim.our_value, claim.verdict, claim.reason) == (ours, "holds", "")


@pytest.mark.parametrize("sim", [1.0, 1.0 - 1e-12, 1.0 - 1e-13])
def test_an_exact_test_retest_of_the_simulation_score_is_left_untested(sim: float) -> None:
    """r = 1 (to within 1e-12) of the deterministic simulator: SIM-Corr leaves the judgement, named in the
    reason, and the other measures hold."""
    claim = _claim(_claims(_reliability(RETEST | {"SIM-Corr": sim})), RETEST_CLAIM)
    assert (claim.verdict, claim.our_value, claim.reason) == (
        "holds", "below 0.9: none (of 6 measures)", DETERMINISTIC_REASON)


def test_a_test_retest_just_below_1_is_judged() -> None:
    """0.999 is no deterministic r = 1: SIM-Corr is judged, and reaching 0.9 it contradicts the paper."""
    claim = _claim(_claims(_reliability(RETEST | {"SIM-Corr": 0.999})), RETEST_CLAIM)
    assert (claim.verdict, claim.our_value) == ("differs", "below 0.9: none (of 7 measures)")
    assert claim.reason == "reaches 0.9 although the paper finds it unreliable: SIM-Corr 0.999"


def test_an_alpha_of_1_is_judged_like_any_other() -> None:
    """Only test-retest has the deterministic exemption: an unreliable measure's α of 1 contradicts the paper."""
    claim = _claim(_claims(_reliability(alpha=ALPHA | {"IN-UCI": 1.0})), ALPHA_CLAIM)
    assert (claim.verdict, claim.our_value) == ("differs", "below 0.9: IN-UMass 0.840, GRAD-Loss 0.490 (of 7 measures)")
    assert claim.reason == "reaches 0.9 although the paper finds it unreliable: IN-UCI 1.000"


@pytest.mark.parametrize(("retest", "verdict", "reason"), [
    ({"IN-EmbCos": 0.9}, "holds", ""),  # 0.9 reaches 0.9
    ({"IN-EmbCos": 0.9 - EPS}, "differs", "also below 0.9: IN-EmbCos 0.900"),
    ({"SIM-Corr": 0.9 - EPS}, "holds", ""),
    ({"SIM-Corr": 0.9}, "differs", "reaches 0.9 although the paper finds it unreliable: SIM-Corr 0.900"),
    ({"IN-EmbCos": (0.85, 0.8, 0.9)}, "within_noise",
     "also below 0.9: IN-EmbCos 0.850; each one's bootstrap interval contains 0.9"),
    ({"IN-EmbCos": (0.85, 0.8, 0.9 - EPS)}, "differs", "also below 0.9: IN-EmbCos 0.850"),
    ({"SIM-Corr": (0.95, 0.9, 0.97)}, "within_noise",
     "reaches 0.9 although the paper finds it unreliable: SIM-Corr 0.950; each one's bootstrap interval contains 0.9"),
    ({"SIM-Corr": (0.95, 0.9 + EPS, 0.97)}, "differs",
     "reaches 0.9 although the paper finds it unreliable: SIM-Corr 0.950"),
    ({"IN-EmbCos": (0.85, 0.8, 0.95), "SIM-Corr": (0.95, 0.9 + EPS, 0.97)}, "differs",
     "also below 0.9: IN-EmbCos 0.850; reaches 0.9 although the paper finds it unreliable: SIM-Corr 0.950"),
])
def test_reliability_is_within_noise_when_every_misplaced_interval_contains_09(
        retest: dict[str, Value], verdict: str, reason: str) -> None:
    claim = _claim(_claims(_reliability(RETEST | retest)), RETEST_CLAIM)
    assert (claim.verdict, claim.reason) == (verdict, reason)


# --- GRAD-Loss below 0.9, every ABL measure above -------------------------------------------------------------------


def _faithfulness(grad: Value, abl: Value) -> fc.Claim:
    """The claim on GRAD-Loss's α (lower run, with its interval; the other run higher) and ABL-Div's test-retest r
    (with its interval; ABL-Div's α 0.99)."""
    reliability = _reliability({"GRAD-Loss": 0.95, "ABL-Div": abl}, {"GRAD-Loss": grad, "ABL-Div": 0.99})
    return _claim(_claims(reliability), FAITHFUL_CLAIM)


GRAD_LOW, ABL_HIGH = (0.5, NAN, NAN), (0.95, NAN, NAN)


@pytest.mark.parametrize(("grad", "abl", "verdict", "reason"), [
    (GRAD_LOW, ABL_HIGH, "holds", ""),
    (GRAD_LOW, (0.9, NAN, NAN), "holds", ""),  # 0.9 reaches 0.9
    ((0.9, NAN, NAN), ABL_HIGH, "differs", "GRAD-Loss α 0.900 ≥ 0.9"),  # 0.9 is not below 0.9
    ((0.9, 0.9, 0.95), ABL_HIGH, "differs", "GRAD-Loss α 0.900 ≥ 0.9"),  # nor is an interval ending at it
    ((0.9, 0.9 - EPS, 0.95), ABL_HIGH, "within_noise", f"GRAD-Loss α 0.900 ≥ 0.9; {BOOTSTRAP_REACHES}"),
    ((0.95, 0.92, 0.99), ABL_HIGH, "differs", "GRAD-Loss α 0.950 ≥ 0.9"),
    ((0.95, 0.85, 0.99), ABL_HIGH, "within_noise", f"GRAD-Loss α 0.950 ≥ 0.9; {BOOTSTRAP_REACHES}"),
    ((0.95, 0.85, 0.99), (0.9, NAN, NAN), "within_noise", f"GRAD-Loss α 0.950 ≥ 0.9; {BOOTSTRAP_REACHES}"),
    (GRAD_LOW, (0.9 - EPS, NAN, NAN), "differs", "ABL-Div test-retest 0.900 < 0.9"),
    (GRAD_LOW, (0.85, 0.8, 0.9), "within_noise", f"ABL-Div test-retest 0.850 < 0.9; {BOOTSTRAP_REACHES}"),
    (GRAD_LOW, (0.85, 0.8, 0.95), "within_noise", f"ABL-Div test-retest 0.850 < 0.9; {BOOTSTRAP_REACHES}"),
    (GRAD_LOW, (0.85, 0.8, 0.9 - EPS), "differs", "ABL-Div test-retest 0.850 < 0.9"),
    ((0.95, 0.92, 0.99), (0.85, 0.8, 0.95), "differs", "GRAD-Loss α 0.950 ≥ 0.9; ABL-Div test-retest 0.850 < 0.9"),
    ((0.95, 0.85, 0.99), (0.85, 0.8, 0.95), "within_noise",
     f"GRAD-Loss α 0.950 ≥ 0.9; ABL-Div test-retest 0.850 < 0.9; {BOOTSTRAP_REACHES}"),
])
def test_grad_loss_falls_below_09_and_the_weakest_abl_value_reaches_it(
        grad: tuple[float, float, float], abl: tuple[float, float, float], verdict: str, reason: str) -> None:
    """GRAD-Loss's α < 0.9 and the weakest ABL value ≥ 0.9; within noise when each side that misses has an
    interval reaching the other side of 0.9 (GRAD-Loss's lower end below 0.9, the ABL value's upper end at least
    0.9); the reason names each side that misses."""
    claim = _faithfulness(grad, abl)
    assert (claim.verdict, claim.reason) == (verdict, reason)
    assert claim.our_value == (f"GRAD-Loss α {grad[0]:.3f} (lower run); weakest ABL value {abl[0]:.3f} "
                               "(ABL-Div, test-retest)")


def test_grad_loss_alpha_is_read_from_its_own_alpha_rows() -> None:
    """GRAD-Loss's α (0.95 here) comes from GRAD-Loss's α rows alone: not its Pearson r (0.5), nor the α of an ABL
    measure (sorting before it, 0.92), GRAD-PClass (after it, 0.4) or IN-UCI, nor another statistic's rows."""
    retest = {"GRAD-Loss": 0.5, "ABL-Div": 0.97, "GRAD-PClass": 0.95, "IN-UCI": 0.95}
    alpha = {"GRAD-Loss": 0.95, "ABL-Div": 0.92, "GRAD-PClass": 0.4, "IN-UCI": 0.4}
    decoys = pd.DataFrame([{"model": MODEL, "measure": "GRAD-Loss", "statistic": stat, "run": "test", "value": 0.1}
                           for stat in ("agreement", "spearman")])
    claim = _claim(_claims(pd.concat([_reliability(retest, alpha), decoys], ignore_index=True)), FAITHFUL_CLAIM)
    assert claim.our_value == "GRAD-Loss α 0.950 (lower run); weakest ABL value 0.920 (ABL-Div, retest)"
    assert (claim.verdict, claim.reason) == ("differs", "GRAD-Loss α 0.950 ≥ 0.9")


def test_without_grad_loss_alpha_the_faithfulness_claim_is_not_testable() -> None:
    """No GRAD-Loss α (only its Pearson r): not testable, with the reason."""
    reliability = _reliability({"GRAD-Loss": 0.5, "ABL-Div": 0.95}, {"GRAD-Loss": 0.5, "ABL-Div": 0.95})
    reliability = reliability[~((reliability["measure"] == "GRAD-Loss")
                                & (reliability["statistic"] == "cronbach_alpha"))]
    claim = _claim(_claims(reliability), FAITHFUL_CLAIM)
    assert (claim.verdict, claim.our_value, claim.reason) == (
        "not_testable", "not built", "reliability.csv lacks GRAD-Loss or the ABL measures")


# --- the subset-noise reason of a low α ------------------------------------------------------------------------------


NOISY = ("GRAD-Loss", "ABL-Loss", "ABL-Div", "IN-UCI", "IN-UMass", "IN-EmbCos", "SIM-Corr")
#: ABL-Loss (the paper: reliable) falls to 0.2; ABL-Div sits exactly at 0.9.
NOISY_ALPHA = {"GRAD-Loss": 0.3, "ABL-Loss": 0.2, "ABL-Div": 0.9, "IN-UCI": 0.79, "IN-UMass": 0.84,
               "IN-EmbCos": 0.95, "SIM-Corr": 0.95}
#: Sign agreement of the lower run: among the measures with α ≥ 0.9 the least is ABL-Div's (55 %).
AGREEMENT = {"GRAD-Loss": 0.12, "ABL-Loss": 0.16, "ABL-Div": 0.55, "IN-UCI": 0.37, "IN-UMass": 1.0,
             "IN-EmbCos": 0.68, "SIM-Corr": 0.6}
EFFECT = "median |effect| 3.3e-05 against a subset-to-subset SD of 0.0071"


def _noisy(retest: dict[str, float] | None = None, agreement: dict[str, float] | None = None) -> list[fc.Claim]:
    retest = {m: 0.95 for m in NOISY} | {"SIM-Corr": 0.5} | (retest or {})
    return _claims(_reliability(retest, NOISY_ALPHA, noise=AGREEMENT | (agreement or {})))


def test_a_low_alpha_is_explained_by_its_lower_runs_subset_noise() -> None:
    """ABL-Loss's low α, in both claims that judge it: its sign agreement beside GRAD-Loss's and the least of the
    measures with α ≥ 0.9 (ABL-Div exactly at 0.9 included), all from the lower run's rows."""
    noise = (f"ABL-Loss: 16% of concepts keep their effect's sign on every data subset (GRAD-Loss, the paper's "
             f"unreliable measure, 12%; the measures with α ≥ 0.9 at least 55%); {EFFECT}")
    claims = _noisy()
    alpha = _claim(claims, ALPHA_CLAIM)
    assert (alpha.verdict, alpha.reason) == ("differs", f"also below 0.9: ABL-Loss 0.200; {noise}")
    faithful = _claim(claims, FAITHFUL_CLAIM)
    assert (faithful.verdict, faithful.reason) == ("differs", f"ABL-Loss retest 0.200 < 0.9; {noise}")


def test_grad_loss_is_not_set_beside_itself() -> None:
    """A low test-retest of GRAD-Loss is explained by its own figures, without GRAD-Loss as the comparison."""
    claim = _claim(_noisy({"GRAD-Loss": 0.5}), RETEST_CLAIM)
    assert claim.verdict == "differs"
    assert claim.reason == ("also below 0.9: GRAD-Loss 0.500; GRAD-Loss: 12% of concepts keep their effect's sign "
                            f"on every data subset (the measures with α ≥ 0.9 at least 55%); {EFFECT}")


def test_grad_loss_without_a_sign_agreement_is_left_out_of_the_comparison() -> None:
    claim = _claim(_noisy(agreement={"GRAD-Loss": NAN}), ALPHA_CLAIM)
    assert claim.reason == ("also below 0.9: ABL-Loss 0.200; ABL-Loss: 16% of concepts keep their effect's sign on "
                            f"every data subset (the measures with α ≥ 0.9 at least 55%); {EFFECT}")


def test_the_reliable_measures_agreement_is_read_from_alpha_rows_only() -> None:
    """SIM-Corr (α 0.95, agreement 51 %, the least) counts among the measures with α ≥ 0.9 although its Pearson r
    (0.5) and another statistic's value (0.1) are below 0.9."""
    reliability = _reliability({m: 0.95 for m in NOISY} | {"SIM-Corr": 0.5}, NOISY_ALPHA,
                               noise=AGREEMENT | {"SIM-Corr": 0.51})
    decoy = pd.DataFrame([{"model": MODEL, "measure": "SIM-Corr", "statistic": "agreement", "run": "test",
                           "value": 0.1}])
    claim = _claim(_claims(pd.concat([reliability, decoy], ignore_index=True)), ALPHA_CLAIM)
    assert claim.reason.endswith("the measures with α ≥ 0.9 at least 51%); " + EFFECT)


def test_a_measure_sorting_after_grad_loss_is_set_beside_grad_loss() -> None:
    """IN-UCI (a name sorting after GRAD-Loss's) with a low test-retest r: its subset noise beside GRAD-Loss's."""
    claim = _claim(_noisy({"IN-UCI": 0.5}), RETEST_CLAIM)
    assert claim.reason == ("also below 0.9: IN-UCI 0.500; IN-UCI: 37% of concepts keep their effect's sign on every "
                            "data subset (GRAD-Loss, the paper's unreliable measure, 12%; the measures with α ≥ 0.9 "
                            f"at least 55%); {EFFECT}")


def test_an_abl_value_exactly_at_09_gets_no_noise_reason() -> None:
    """GRAD-Loss at α 0.95 fails the faithfulness claim; the weakest ABL value, exactly 0.9, reaches the mark, so
    the reason names GRAD-Loss only (no subset-noise sentence for ABL-Div)."""
    alpha = {m: 0.95 for m in NOISY} | {"ABL-Div": 0.9}
    claim = _claim(_claims(_reliability({m: 0.95 for m in NOISY}, alpha, noise=AGREEMENT)), FAITHFUL_CLAIM)
    assert (claim.verdict, claim.reason) == ("differs", "GRAD-Loss α 0.950 ≥ 0.9")


def test_test_retest_reads_only_the_test_retest_run() -> None:
    """A row of another run whose name sorts after ``test-retest`` (a low 0.1 for IN-EmbCos) is not a test-retest r."""
    decoy = pd.DataFrame([{"model": MODEL, "measure": "IN-EmbCos", "statistic": "pearson", "run": "validation",
                           "value": 0.1, "ci_low": NAN, "ci_high": NAN}])
    claim = _claim(_claims(pd.concat([_reliability(), decoy], ignore_index=True)), RETEST_CLAIM)
    assert (claim.verdict, claim.our_value) == ("holds", BASE[0][1])


def test_a_holding_faithfulness_claim_has_no_noise_reason() -> None:
    """With the subset-noise columns present, a claim that holds still has an empty reason."""
    claims = _claims(_reliability(noise={m: 0.9 for m in MEASURES}))
    for text, _ in BASE[:3]:
        claim = _claim(claims, text)
        assert (claim.verdict, claim.reason) == ("holds", "")


# --- MTMM blocks ---------------------------------------------------------------------------------------------------


def _mtmm_claim(mtmm: pd.DataFrame, text: str) -> fc.Claim:
    return _claim(_claims(mtmm=mtmm), text)


@pytest.mark.parametrize(("both_orders", "reverse"), [(True, False), (False, False), (False, True)])
def test_a_pair_counts_once_whether_stored_in_one_order_or_both(both_orders: bool, reverse: bool) -> None:
    """|τ| intervals [0.1, 0.3] and [0, 0.5]: the block mean 0.25 over 2 pairs, interval [0.05, 0.4], with each pair
    stored in both orders, only as (faithfulness, readability) or only as (readability, faithfulness)."""
    taus = {("ABL-Div", "IN-EmbCos"): (0.2, 0.1, 0.3), ("GRAD-Loss", "IN-EmbCos"): (-0.3, -0.5, 0.1)}
    if reverse:
        taus = {(b, a): tau for (a, b), tau in taus.items()}
    claim = _mtmm_claim(_mtmm(taus, both_orders=both_orders), DIVERGENT_CLAIM)
    assert (claim.our_value, claim.verdict) == ("mean |τ| 0.250 [0.050, 0.400] over 2 pairs", "holds")


def test_a_pair_without_tau_is_left_out() -> None:
    """A NaN τ is no pair: the divergence block keeps its one valued pair, the IN/OUT block has none."""
    taus = {("ABL-Div", "IN-EmbCos"): 0.2, ("GRAD-Loss", "IN-EmbCos"): NAN, ("IN-EmbCos", "OUT-EmbCos"): NAN}
    claims = _claims(mtmm=_mtmm(taus))
    assert _claim(claims, DIVERGENT_CLAIM).our_value == "mean |τ| 0.200 over 1 pairs"
    sides = _claim(claims, SIDES_CLAIM)
    assert (sides.verdict, sides.our_value) == ("not_testable", "no pairs")


def test_the_mtmm_claims_read_only_kendall_rows_between_two_measures() -> None:
    """Other statistics between two measures (sorting before and after ``kendall``) and α on the diagonal are not
    block pairs."""
    decoys = pd.concat([_mtmm({pair: 0.95 for pair in TAUS}, statistic=stat) for stat in ("distance", "spearman")])
    claims = _claims(mtmm=pd.concat([decoys, _mtmm(TAUS)], ignore_index=True))
    for text, ours in BASE[3:6]:
        claim = _claim(claims, text)
        assert (claim.our_value, claim.verdict) == (ours, "holds")


@pytest.mark.parametrize(("text", "tau", "verdict", "reason"), [
    (SIDES_CLAIM, (0.1, 0.05, 0.2), "holds", ""),
    (SIDES_CLAIM, (0.4, NAN, NAN), "differs", "mean |τ| 0.400 is outside |τ| < 0.15"),
    (SIDES_CLAIM, (0.4, 0.15, 0.5), "differs", "mean |τ| 0.400 is outside |τ| < 0.15"),
    (SIDES_CLAIM, (0.4, 0.1, 0.5), "within_noise",
     "mean |τ| 0.400 is outside |τ| < 0.15; its interval [0.100, 0.500] reaches it"),
    (DIVERGENT_CLAIM, (-0.4, -0.5, -0.3), "within_noise",
     "mean |τ| 0.400 is outside |τ| 0.0–0.3; its interval [0.300, 0.500] reaches it"),
    (DIVERGENT_CLAIM, (-0.4, -0.5, -0.3 - EPS), "differs", "mean |τ| 0.400 is outside |τ| 0.0–0.3"),
    (CONVERGENT_CLAIM, (0.8, 0.7, 0.9), "within_noise",
     "mean |τ| 0.800 is outside ≈ 0.5; its interval [0.700, 0.900] reaches it"),
    (CONVERGENT_CLAIM, (0.8, 0.7 + EPS, 0.9), "differs", "mean |τ| 0.800 is outside ≈ 0.5"),
])
def test_an_mtmm_reason_is_empty_when_holding_and_names_the_interval_only_when_it_reaches(
        text: str, tau: tuple[float, float, float], verdict: str, reason: str) -> None:
    pair = {SIDES_CLAIM: ("IN-EmbCos", "OUT-EmbCos"), DIVERGENT_CLAIM: ("ABL-Div", "IN-EmbCos"),
            CONVERGENT_CLAIM: ("ABL-Div", "GRAD-Loss")}[text]
    claim = _mtmm_claim(_mtmm({pair: tau}), text)
    assert (claim.verdict, claim.reason) == (verdict, reason)


@pytest.mark.parametrize(("taus", "judged"), [
    ({("IN-EmbCos", "OUT-EmbCos"): 0.1}, SIDES_CLAIM),
    ({("ABL-Div", "GRAD-Loss"): 0.5}, CONVERGENT_CLAIM),
])
def test_a_block_without_pairs_is_not_testable_and_the_others_are_still_judged(
        taus: dict[tuple[str, str], float], judged: str) -> None:
    claims = [c for c in _claims(mtmm=_mtmm(taus)) if c.table == "Fig. 3 / Sec. 5.2.2"]
    assert [c.claim for c in claims] == [f"{MODEL}: {t}" for t in (DIVERGENT_CLAIM, SIDES_CLAIM, CONVERGENT_CLAIM)]
    for claim in claims:
        if claim.claim == f"{MODEL}: {judged}":
            assert (claim.verdict, claim.reason) == ("holds", "")
        else:
            assert (claim.verdict, claim.our_value, claim.reason) == (
                "not_testable", "no pairs", "the MTMM table lacks one of the two groups")


# --- validity against the raters -----------------------------------------------------------------------------------


def test_validity_reads_only_kendall_rows_against_the_raters() -> None:
    """Rows of other criteria (sorting before and after ``raters``) and other statistics, placed first and
    favouring SIM-Corr, are left alone."""
    favour_sim = RATINGS | {"SIM-Corr": 0.9}
    decoys = [_validity(favour_sim, criterion=criterion) for criterion in ("alignment", "planted", "simulation")]
    decoys += [_validity(favour_sim, statistic=statistic) for statistic in ("pearson", "spearman")]
    claim = _claim(_claims(validity=pd.concat([*decoys, _validity(RATINGS)], ignore_index=True)), VALIDITY_CLAIM)
    assert (claim.our_value, claim.verdict, claim.reason) == (BASE[6][1], "holds", "")


@pytest.mark.parametrize(("sim", "verdict", "reason"), [
    ((0.4, 0.3, 0.5), "holds", ""),
    ((0.6, 0.55, 0.7), "differs", "SIM-Corr has the highest τ (0.600)"),  # OUT-EmbCos overlaps, IN-EmbCos not
    ((0.6, 0.54, 0.7), "within_noise",
     "SIM-Corr has the highest τ (0.600); its bootstrap interval overlaps that of IN-EmbCos (0.500)"),
])
def test_an_embcos_measure_leads_and_noise_is_judged_against_the_best_embcos(
        sim: tuple[float, float, float], verdict: str, reason: str) -> None:
    validity = _validity({"SIM-Corr": sim, "IN-EmbCos": (0.5, 0.4, 0.54), "OUT-EmbCos": (0.45, 0.3, 0.6)})
    claim = _claim(_claims(validity=validity), VALIDITY_CLAIM)
    assert (claim.verdict, claim.reason) == (verdict, reason)


def test_either_embcos_measure_may_lead() -> None:
    claim = _claim(_claims(validity=_validity({"SIM-Corr": 0.3, "IN-EmbCos": 0.2, "OUT-EmbCos": 0.5})),
                   VALIDITY_CLAIM)
    assert (claim.verdict, claim.our_value) == ("holds", "τ with simulated ratings: SIM-Corr 0.300; IN-EmbCos 0.200; "
                                                         "OUT-EmbCos 0.500")


def test_validity_without_the_simulation_score_is_not_testable() -> None:
    claim = _claim(_claims(validity=_validity({"IN-EmbCos": 0.5})), VALIDITY_CLAIM)
    assert (claim.verdict, claim.our_value) == ("not_testable", "no rating criterion")


# --- method comparison (Fig. 4) ------------------------------------------------------------------------------------


def _sae_over_neuron(measure: str, sae: float, neuron: float, alignment: dict[str, float] | None = None) -> fc.Claim:
    methods = _methods({("sae", measure): sae, ("neuron", measure): neuron}, alignment=alignment)
    (claim,) = [c for c in _claims(methods=methods) if c.table == "Fig. 4 / Sec. 5.3"]
    assert claim.claim == f"{MODEL}: sae concepts score above neuron concepts on every representative measure"
    return claim


@pytest.mark.parametrize(("measure", "sae", "neuron"), [
    ("IN-EmbCos", 0.4, 0.4), ("SIM-Corr", 0.4, 0.4), ("ABL-Div", -0.2, 0.2), ("GRAD-Loss", 0.2, -0.2)])
def test_equal_values_are_not_ordered(measure: str, sae: float, neuron: float) -> None:
    """A tie (equal means; on faithfulness equal magnitudes) is no 'above'."""
    claim = _sae_over_neuron(measure, sae, neuron)
    assert (claim.verdict, claim.reason) == ("differs", f"not above on {measure}")


@pytest.mark.parametrize(("measure", "verdict"), [
    ("IN-EmbCos", "differs"), ("OUT-EmbCos", "differs"), ("SIM-Corr", "differs"), ("ABL-Div", "holds"),
    ("GRAD-Loss", "holds")])
def test_readability_compares_the_signed_mean_and_faithfulness_its_magnitude(measure: str, verdict: str) -> None:
    """SAE −0.5 against neurons 0.2: below on a readability or simulation measure, above by |mean| on a
    faithfulness one."""
    claim = _sae_over_neuron(measure, -0.5, 0.2)
    assert claim.verdict == verdict and claim.our_value == f"{measure} -0.5 vs 0.2"


@pytest.mark.parametrize("alignment", [{"sae": NAN, "neuron": 0.7}, {"sae": 0.5, "neuron": NAN}])
def test_the_alignment_premise_is_cited_only_when_both_families_have_one(alignment: dict[str, float]) -> None:
    claim = _sae_over_neuron("IN-EmbCos", 0.1, 0.3, alignment)
    assert (claim.verdict, claim.reason) == ("differs", "not above on IN-EmbCos")


def test_the_alignment_premise_is_cited_when_both_families_have_one() -> None:
    claim = _sae_over_neuron("IN-EmbCos", 0.1, 0.3, {"sae": 0.7, "neuron": 0.7})
    assert claim.reason == ("not above on IN-EmbCos; median planted alignment (best AUC against a planted concept) "
                            "sae 0.700 vs neuron 0.700: the world's sae concepts are no more monosemantic than its "
                            "neuron concepts, the premise of the paper's order")


def test_no_method_rows_no_method_claims() -> None:
    """A model without method rows, or a family missing, gets no Fig. 4 claim (random is never judged)."""
    empty = pd.DataFrame(columns=["model", "family", "measure", "mean"])
    assert not [c for c in _claims(methods=empty) if c.table == "Fig. 4 / Sec. 5.3"]
    only_random = _methods({("random", "IN-EmbCos"): 0.9, ("neuron", "IN-EmbCos"): 0.1})
    assert not [c for c in _claims(methods=only_random) if c.table == "Fig. 4 / Sec. 5.3"]


def test_a_missing_family_skips_only_its_own_comparisons() -> None:
    """Without SAE rows, probe against neuron is still judged (the two SAE comparisons are skipped)."""
    methods = _methods({("probe", "IN-EmbCos"): 0.6, ("neuron", "IN-EmbCos"): 0.4})
    claims = [c for c in _claims(methods=methods) if c.table == "Fig. 4 / Sec. 5.3"]
    assert [(c.claim, c.verdict) for c in claims] == [
        (f"{MODEL}: probe concepts score above neuron concepts on every representative measure", "holds")]


def test_noise_of_a_method_order_needs_every_reversed_pair_to_overlap() -> None:
    """Reversed on two measures: within noise only when both pairs' intervals overlap (|mean| intervals on
    faithfulness: −0.25 ± 0.05 is [0.2, 0.3] against [0.3, 0.4])."""
    def verdict(abl_high: float) -> fc.Claim:
        methods = _methods({("sae", "ABL-Div"): (-0.25, -0.3, -0.2), ("neuron", "ABL-Div"): (0.35, abl_high, 0.4),
                            ("sae", "IN-EmbCos"): (0.1, 0.0, 0.2), ("neuron", "IN-EmbCos"): (0.3, 0.2, 0.4)})
        (claim,) = [c for c in _claims(methods=methods) if c.table == "Fig. 4 / Sec. 5.3"]
        return claim

    close = verdict(0.3)
    assert (close.verdict, close.reason) == (
        "within_noise", "not above on ABL-Div, IN-EmbCos; the bootstrap intervals overlap on each")
    apart = verdict(0.3 + EPS)
    assert (apart.verdict, apart.reason) == ("differs", "not above on ABL-Div, IN-EmbCos")
