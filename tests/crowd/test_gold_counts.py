"""Gold items on hand-made studies small enough to count by hand: η̂ = k / n per rater and for all raters, how many
gold items a task can take, and the names an error lists."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from neuroneval.crowd.design import StudyDesign
from neuroneval.crowd.gold import insert_gold_items, rater_error_from_gold, truth_as_gold
from tests.oracles import clopper_pearson


def _design(explanations: list[str], shown: list[list[int]]) -> StudyDesign:
    """One task per explanation, showing the given inputs (samples and tasks as the designer writes them)."""
    tasks = pd.DataFrame({"task": [f"t{k}" for k in range(len(explanations))], "batch": 0,
                          "explanation": explanations, "n_inputs": [len(inputs) for inputs in shown]})
    for slot in range(max(len(inputs) for inputs in shown)):
        tasks[f"input_{slot + 1}"] = pd.array([inputs[slot] if slot < len(inputs) else None for inputs in shown],
                                              dtype="Int64")
    samples = pd.DataFrame([{"task": f"t{k}", "explanation": explanation, "input_id": i, "position": slot}
                            for k, (explanation, inputs) in enumerate(zip(explanations, shown, strict=True))
                            for slot, i in enumerate(inputs)])
    pairs = pd.DataFrame({"unit": [f"u{k}" for k in range(len(explanations))], "explanation": explanations})
    return StudyDesign(pairs=pairs, samples=samples, tasks=tasks)


def test_the_rater_error_is_the_share_of_wrong_gold_ratings() -> None:
    gold = pd.DataFrame({"task": ["t0", "t0", "t1"], "input_id": [5, 6, 7], "answer": [1, 0, 1]})
    design = StudyDesign(pairs=pd.DataFrame(), samples=pd.DataFrame(), tasks=pd.DataFrame(), gold=gold)
    ratings = pd.DataFrame({"task": ["t0", "t0", "t1", "t0", "t0", "t1", "t1"],
                            "input": [5, 6, 7, 5, 6, 7, 8],  # input 8 is not a gold item: ignored
                            "rater": ["a", "a", "a", "b", "b", "b", "a"],
                            "label": [1, 1, 1, 0, 1, 1, 0]})
    table = rater_error_from_gold(design, ratings, by_rater=True, ci_level=0.9).set_index("rater")
    # a: 6 → 1 is wrong (1 of 3); b: 5 → 0 and 6 → 1 are wrong (2 of 3); all: 3 of 6
    for rater, wrong, total in (("all", 3, 6), ("a", 1, 3), ("b", 2, 3)):
        row = table.loc[rater]
        assert (row["wrong"], row["gold_ratings"]) == (wrong, total)
        assert row["rater_error"] == pytest.approx(wrong / total, abs=1e-15)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(clopper_pearson(wrong, total, 0.9), rel=1e-9)
        assert row["ci_level"] == 0.9
    assert rater_error_from_gold(design, ratings)["rater"].tolist() == ["all"]  # one row unless by rater
    reversed_raters = rater_error_from_gold(design, ratings.iloc[::-1], by_rater=True)
    assert reversed_raters["rater"].tolist() == ["all", "a", "b"]  # raters sorted, whatever the order of rows
    for level in (0, 0.0, -0.5, 1, 1.0, 1.5):
        with pytest.raises(ValueError, match="ci_level must lie in"):
            rater_error_from_gold(design, ratings, ci_level=level)
    for no_gold in (None, gold.iloc[:0]):
        with pytest.raises(ValueError, match="the study has no gold items"):
            rater_error_from_gold(StudyDesign(pairs=pd.DataFrame(), samples=pd.DataFrame(), tasks=pd.DataFrame(),
                                              gold=no_gold), ratings)


def test_a_task_takes_exactly_as_many_gold_items_as_it_has_usable() -> None:
    design = _design(["dog", "cat"], [[1, 2], [3, 4]])
    # dog has three gold items, one of which its task already shows; cat has two
    answers = pd.DataFrame({"explanation": ["dog", "dog", "dog", "cat", "cat"], "input_id": [2, 10, 11, 12, 13],
                            "answer": [1, 0, 1, 1, 0]})
    with_gold = insert_gold_items(design, answers, per_task=2, seed=0)
    gold = with_gold.gold.groupby("task")["input_id"].apply(sorted).to_dict()
    assert gold == {"t0": [10, 11], "t1": [12, 13]}  # the shown input 2 is never a gold item of its task
    assert with_gold.tasks["n_inputs"].tolist() == [4, 4]
    with pytest.raises(ValueError, match=r"gold answers: explanation 'dog' has 2 gold item\(s\) usable in task "
                                         r"'t0', need 3 \(gold_per_task\)"):
        insert_gold_items(design, answers, per_task=3, seed=0)
    for per_task in (0, -1, True, 1.0):
        with pytest.raises(ValueError, match="per_task must be an integer >= 1"):
            insert_gold_items(design, answers, per_task=per_task, seed=0)


def test_truth_without_the_explanations_names_the_first_five() -> None:
    names = ["a1", "a2", "a3", "a4", "a5", "a6"]
    design = _design(names, [[k] for k in range(6)])
    truth = pd.DataFrame({"input_id": np.arange(6), "other": 0})
    with pytest.raises(ValueError, match=r"no ground-truth column for explanation\(s\) \['a1', 'a2', 'a3', 'a4', "
                                         r"'a5'\]$"):
        truth_as_gold(design, truth)


def test_truth_as_gold_answers_every_sampled_input_with_its_label() -> None:
    design = _design(["dog", "cat"], [[1, 2, 3], [2]])
    truth = pd.DataFrame({"input_id": [0, 1, 2, 3], "dog": [1, 0, 1, 1], "cat": [0, 0, 1, 0]})
    gold = truth_as_gold(design, truth).gold
    assert gold.to_dict("list") == {"task": ["t0", "t0", "t0", "t1"], "input_id": [1, 2, 3, 2],
                                    "answer": [0, 1, 1, 1]}
    soft = truth.astype({"dog": float})
    soft["dog"] = [0.0, 1.0, 0.5, 0.5]
    with pytest.raises(ValueError, match=r"truth table, column 'dog': input 2 has no binary label"):
        # after inputs 0 and 1 (labels 0 and 1), inputs 2 and 3 are not binary: the first is named
        truth_as_gold(_design(["dog", "cat"], [[0, 1, 2, 3], [2]]), soft)


def test_insert_keeps_input_columns_integer_when_tasks_differ_in_length() -> None:
    design = _design(["dog", "cat"], [[1, 2, 3], [4]])
    answers = pd.DataFrame({"explanation": ["dog", "cat"], "input_id": [10, 12], "answer": [1, 0]})
    tasks = insert_gold_items(design, answers, per_task=1, seed=0).tasks
    assert all(str(tasks[column].dtype) == "Int64" for column in tasks if column.startswith("input_"))
    assert tasks["n_inputs"].tolist() == [4, 2] and tasks["input_3"].isna().tolist() == [False, True]


@pytest.mark.parametrize(("reader", "text", "message"), [
    ("answers", "explanation,input_id,answer\ndog,3,1\ndog,4,0\ndog,5,\n",
     r"gold.csv, line 4, column answer: '' is not 0 or 1"),
    ("answers", "explanation,input_id,answer\ndog,1,1\ndog,98,0\ndog,2,0\ndog,99,1\n",
     r"line 3, column input_id: unknown input 98"),
    ("answers", "explanation,input_id,answer\ndog,3,1\ndog,4,0\ndog,3,0\ndog,4,1\n",
     r"line 4: gold item \(dog, 3\) is listed twice"),
    ("study", "task,input_id,answer\nt0,3,1\nt0,4,\nt0,5,NA\n", r"gold.csv, line 3, column answer: '' is not 0 or 1"),
    ("study", "task,input_id,answer\nt0,3,1\nt0,x,1\nt0,y,1\n",
     r"line 3, column input_id: 'x' is not an integer input id"),
])
def test_gold_file_errors_name_the_first_bad_line(tmp_path, reader: str, text: str, message: str) -> None:
    from neuroneval.crowd.gold import read_gold_answers, read_study_gold

    path = tmp_path / "gold.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        if reader == "answers":
            read_gold_answers(path, input_ids=[1, 2, 3, 4, 5])
        else:
            read_study_gold(path)


def test_gold_options_are_keyword_only_with_one_item_per_task_and_seed_0_by_default(tmp_path) -> None:
    from neuroneval.crowd.gold import read_gold_answers

    design = _design(["dog"], [[1, 2]])
    answers = pd.DataFrame({"explanation": ["dog"] * 4, "input_id": [10, 11, 12, 13], "answer": [1, 0, 1, 0]})
    default = insert_gold_items(design, answers)
    assert len(default.gold) == 1
    pd.testing.assert_frame_equal(default.gold, insert_gold_items(design, answers, per_task=1, seed=0).gold)
    pd.testing.assert_frame_equal(default.tasks, insert_gold_items(design, answers, per_task=1, seed=0).tasks)
    path = tmp_path / "gold.csv"
    answers.to_csv(path, index=False)
    with pytest.raises(TypeError):
        read_gold_answers(path, [10, 11, 12, 13])  # type: ignore[misc]
    with pytest.raises(TypeError):
        insert_gold_items(design, answers, 1)  # type: ignore[misc]
    with pytest.raises(TypeError):
        truth_as_gold(design, pd.DataFrame({"input_id": [1, 2], "dog": [0, 1]}), "t")  # type: ignore[misc]
    gold = pd.DataFrame({"task": ["t0"], "input_id": [10], "answer": [1]})
    ratings = pd.DataFrame({"task": ["t0"], "input": [10], "rater": ["a"], "label": [1]})
    with pytest.raises(TypeError):
        rater_error_from_gold(StudyDesign(pairs=pd.DataFrame(), samples=pd.DataFrame(), tasks=pd.DataFrame(),
                                          gold=gold), ratings, 0.9)  # type: ignore[misc]
