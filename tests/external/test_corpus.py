"""Your own text in the workflow (``kind: corpus``, ``sae:`` on custom models; neuroneval.external.corpus): a valid
overlay passes the params check, a typo is named by its key path, every missing path is named at once, and the
dataset's tokens come from the tokenizer alone, as the words of the corpus. The workflow run itself is
tests/external/test_your_lm_doc.py (docs/your_lm.md §5)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from neuroneval.external.checks import check_external
from neuroneval.external.config import ExternalConfigError
from neuroneval.external.corpus import (
    check_same_tokens,
    corpus_concept_table,
    corpus_spec,
    corpus_tokens,
    sae_folder,
    sae_layer,
)
from neuroneval.params.check import ParamsError, check_params

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "workflow/schemas/params.schema.yaml"
PARAMS = yaml.safe_load((ROOT / "params.yaml").read_text())
DOCUMENTS = ["Ann saw 3 red cars .", 'Bo said " the car is blue " .', "the door cost 12 coins , not 7 ."]


def corpus_params(data_root: Path | str = "/nowhere") -> dict:
    config = copy.deepcopy(PARAMS)
    config["external"] = {
        "data_root": str(data_root),
        "datasets": {"mine_text": {"kind": "corpus", "text": "corpus.txt", "tokenizer_model": "my_lm",
                                   "max_positions": 12, "position_sampling": "first",
                                   "concepts": {"rules": "rules.yaml", "words": "names.csv"},
                                   "known_concepts": "known.csv"}},
        "models": {"my_lm": {"family": "custom", "model_dir": "lm", "sae": {"transformer.h.0": "sae"}}}}
    config["settings"]["mine_sae"] = {"dataset": "mine_text", "concepts": {"source": "labels"},
                                      "units": [{"model": "my_lm", "layer": "transformer.h.0.sae"}]}
    config["settings"]["mine_neurons"] = {"dataset": "mine_text", "concepts": {"source": "labels"},
                                          "units": [{"model": "my_lm", "layer": "transformer.h.0.mlp.act"}]}
    config["meta"]["settings"] = ["mine_sae", "mine_neurons"]
    return config


def problems_of(config: dict) -> str:
    with pytest.raises(ParamsError) as caught:
        check_params(config, schema_path=SCHEMA)
    return str(caught.value)


def test_an_overlay_with_a_corpus_and_an_sae_passes() -> None:
    check_params(corpus_params(), schema_path=SCHEMA)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c["external"]["datasets"]["mine_text"].update(txt="corpus.txt"), "external.datasets.mine_text"),
        (lambda c: c["external"]["datasets"]["mine_text"].update(position_sampling="firts"),
         "external.datasets.mine_text.position_sampling"),
        (lambda c: c["external"]["datasets"]["mine_text"]["concepts"].update(rule="r.yaml"),
         "external.datasets.mine_text.concepts"),
        (lambda c: c["external"]["models"]["my_lm"].update(sea={"transformer.h.0": "sae"}), "external.models.my_lm"),
        (lambda c: c["settings"]["mine_sae"]["units"][0].update(layer="transformer.h.1.sae"),
         "settings.mine_sae.units[0].layer: 'transformer.h.1.sae' reads an SAE on 'transformer.h.1', but "
         "external.models.my_lm.sae has none there (['transformer.h.0'])"),
        (lambda c: c["settings"]["mine_sae"]["units"][0].update(model="my_ml"),
         "settings.mine_sae.units[0].model: 'my_ml' is not a custom model of external.models"),
        (lambda c: c["settings"]["mine_sae"]["concepts"].update(source="pseudo:clip"),
         "settings.mine_sae.concepts.source"),
        (lambda c: c["cosy"].update(settings=["mine_sae"]),
         "cosy.settings: 'mine_sae' is a setting on the corpus dataset 'mine_text'"),
    ],
)
def test_a_mistake_in_a_corpus_setting_is_named_by_its_key(change, message: str) -> None:
    config = corpus_params()
    change(config)
    assert message in problems_of(config)


def test_a_factory_model_cannot_record_a_corpus() -> None:
    config = corpus_params()
    config["external"]["models"]["my_mlp"] = {"family": "custom", "factory": "own_model:digits_mlp"}
    config["settings"]["mine_neurons"]["units"][0]["model"] = "my_mlp"
    assert ("settings.mine_neurons.units[0].model: 'my_mlp' is not a family: custom model with a model_dir"
            in problems_of(config))


def test_every_missing_path_and_a_wrong_tokenizer_model_are_named_at_once(tmp_path: Path) -> None:
    config = corpus_params(tmp_path)
    config["external"]["models"]["other"] = {"family": "custom", "torchscript": "m.pt"}
    config["external"]["datasets"]["mine_text"]["tokenizer_model"] = "other"
    with pytest.raises(ExternalConfigError) as caught:
        check_external(config)
    message = str(caught.value)
    for key, name in (("external.datasets.mine_text.text", "corpus.txt"),
                      ("external.datasets.mine_text.concepts.rules", "rules.yaml"),
                      ("external.datasets.mine_text.concepts.words", "names.csv"),
                      ("external.datasets.mine_text.known_concepts", "known.csv"),
                      ("external.models.my_lm.model_dir", "lm"), ("external.models.my_lm.sae.transformer.h.0", "sae"),
                      ("external.models.other.torchscript", "m.pt")):
        assert f"{key}: " in message and str(tmp_path / name) in message, (key, message)
    assert ("external.datasets.mine_text.tokenizer_model: 'other' is not a family: custom model with a model_dir"
            in message)
    assert "remove settings mine_neurons, mine_sae from meta.settings" in message


def test_a_rules_file_that_does_not_parse_is_named(tmp_path: Path) -> None:
    (tmp_path / "rules.yaml").write_text("colour: {word: [red]}\n")
    with pytest.raises(ExternalConfigError, match=r"external.datasets.mine_text.concepts.rules: .*colour"):
        check_external(corpus_params(tmp_path))


def test_the_sae_layer_is_the_layer_before_the_suffix_where_the_model_has_an_sae() -> None:
    external = corpus_params("/data")["external"]
    assert sae_layer("transformer.h.0.sae", {"transformer.h.0": "x"}) == "transformer.h.0"
    assert sae_layer("transformer.h.1.sae", {"transformer.h.0": "x"}) is None
    assert sae_layer("transformer.h.0", {"transformer.h.0": "x"}) is None
    assert sae_folder(external, "my_lm", "transformer.h.0.sae") == "/data/sae"
    assert sae_folder(external, "my_lm", "transformer.h.0.mlp.act") is None


@pytest.fixture(scope="module")
def tiny_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A corpus, a word-level tokenizer trained on it and a GPT-2 config (16 positions) in a transformers folder."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import GPT2Config, PreTrainedTokenizerFast

    root = tmp_path_factory.mktemp("corpus")
    (root / "corpus.txt").write_text("\n".join(DOCUMENTS) + "\n")
    backend = Tokenizer(models.WordLevel(unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.train_from_iterator(DOCUMENTS, trainers.WordLevelTrainer(special_tokens=["<eos>", "<unk>"]))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<eos>", unk_token="<unk>")
    tokenizer.save_pretrained(root / "lm")
    GPT2Config(vocab_size=len(tokenizer), n_positions=16, n_layer=1, n_embd=8, n_head=2).save_pretrained(root / "lm")
    (root / "rules.yaml").write_text("number: {pattern: '[0-9]+'}\nquoted: {between: ['\"', '\"']}\n")
    (root / "names.csv").write_text("token,concept\nAnn,name\nBo,name\n")
    return root


def corpus_words(max_positions: int | None = None) -> pd.DataFrame:
    """The corpus' whitespace words (its tokens) as (input_id, document, position, token), the first kept."""
    rows, input_id = [], 0
    for document, text in enumerate(DOCUMENTS):
        for position, word in enumerate(text.split()):
            rows.append((input_id, document, position, word))
            input_id += 1
    frame = pd.DataFrame(rows, columns=["input_id", "document", "position", "token"])
    return frame.head(max_positions) if max_positions else frame


def test_the_dataset_tokens_are_the_words_of_the_corpus_from_the_tokenizer_alone(tiny_corpus: Path) -> None:
    config = corpus_params(tiny_corpus)
    spec = corpus_spec(config["external"], "mine_text")
    assert spec["model_dir"] == str(tiny_corpus / "lm") and spec["concepts"]["rules"] == str(tiny_corpus / "rules.yaml")
    tokens = corpus_tokens(spec, batch_size=2)
    pd.testing.assert_frame_equal(tokens[["input_id", "document", "position", "token"]], corpus_words(12),
                                  check_dtype=False)
    everything = corpus_tokens({**spec, "max_positions": None})
    pd.testing.assert_frame_equal(everything[["input_id", "document", "position", "token"]], corpus_words(),
                                  check_dtype=False)
    with pytest.raises(ValueError, match="context_length 17 exceeds the positions"):
        corpus_tokens({**spec, "context_length": 17})


def test_the_concept_table_holds_the_rules_and_word_lists(tiny_corpus: Path, tmp_path: Path) -> None:
    spec = corpus_spec(corpus_params(tiny_corpus)["external"], "mine_text")
    tokens_file = tmp_path / "tokens.csv"
    corpus_tokens({**spec, "max_positions": None}).to_csv(tokens_file, index=False)
    frame, metadata = corpus_concept_table(tokens_file, spec, dataset="mine_text")
    assert metadata["concepts"] == ["number", "quoted", "name"] and metadata["source"] == "labels"
    words = corpus_words()["token"].tolist()
    inside, quoted = False, []
    for word in words:
        inside = not inside if word == '"' else inside
        quoted.append(inside and word != '"')
    np.testing.assert_array_equal(frame["number"], [word.isdigit() for word in words])
    np.testing.assert_array_equal(frame["quoted"], quoted)
    np.testing.assert_array_equal(frame["name"], [word in ("Ann", "Bo") for word in words])


def test_a_recording_with_other_tokens_is_refused(tiny_corpus: Path, tmp_path: Path) -> None:
    spec = corpus_spec(corpus_params(tiny_corpus)["external"], "mine_text")
    tokens = corpus_tokens({**spec, "max_positions": None})
    tokens.to_csv(tmp_path / "expected.csv", index=False)
    tokens.to_csv(tmp_path / "same.csv", index=False)
    check_same_tokens(tmp_path / "same.csv", tmp_path / "expected.csv")
    tokens.assign(token=tokens["token"].where(tokens.index != 4, "blue")).to_csv(tmp_path / "other.csv", index=False)
    with pytest.raises(ValueError, match=r"other.csv, row 6: .* the model's tokenizer is not the dataset's"):
        check_same_tokens(tmp_path / "other.csv", tmp_path / "expected.csv")
    tokens.head(5).to_csv(tmp_path / "short.csv", index=False)
    with pytest.raises(ValueError, match=r"short\.csv: 5 rows"):
        check_same_tokens(tmp_path / "short.csv", tmp_path / "expected.csv")


def test_a_corpus_dataset_shows_each_token_after_its_context_from_the_workflows_tokens(tiny_corpus: Path,
                                                                                      tmp_path: Path) -> None:
    """The viewer and the crowd pages of a corpus setting read the workflow's tokens.csv: every input of the
    dataset is its own token, shown after the words before it in its document (the corpus' whitespace words)."""
    from neuroneval.external.corpus import corpus_tokens_path, dataset_media_spec
    from neuroneval.external.own_media import read_media

    config = corpus_params(tiny_corpus)
    spec = dataset_media_spec(config["external"], "mine_text")
    assert spec == {"path": corpus_tokens_path("mine_text"), "ids": None, "image_shape": None, "root": None}
    assert spec["path"] == "data/external/mine_text/tokens.csv"
    tokens = corpus_tokens(corpus_spec(config["external"], "mine_text"))
    written = tmp_path / spec["path"]
    written.parent.mkdir(parents=True)
    tokens.to_csv(written, index=False)
    media = read_media({**spec, "path": str(written)})
    words = corpus_words(12)
    shown = media.lookup(words["input_id"])
    assert media.kind == "tokens" and list(media.ids) == words["input_id"].tolist()
    for row in words.itertuples():
        item = str(shown[row.input_id])
        before = DOCUMENTS[row.document].split()[:row.position]
        assert row.token in item and all(word in item for word in before[-3:]), (row, item)
    tables_only = copy.deepcopy(config["external"])
    tables_only["datasets"]["mine_text"]["kind"] = "tables"
    assert dataset_media_spec(tables_only, "mine_text") is None
