# Your own language model (docs/your_lm.md): a kind: corpus dataset tokenized by its tokenizer_model, and a
# family: custom transformers LM (and, for a layer <layer>.sae, its SAE) recorded on it per token; the corpus as one
# token stream for concepteval (concepteval.corpus).


wildcard_constraints:
    corpus_dataset="|".join(corpus.corpus_datasets(EXTERNAL)) or "NO_CORPUS_DATASET",


rule external_corpus_dataset:
    input:
        corpus_dataset_files,
    output:
        tokens="data/external/{corpus_dataset}/tokens.csv",
        concepts="data/concepts/{corpus_dataset}/labels.parquet",
    log:
        "logs/external/{corpus_dataset}_dataset.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("external_corpus_dataset"),
        dataset=corpus_dataset_spec,
    script:
        "../scripts/step.py"


rule external_corpus_activations:
    input:
        custom_model_files,
        corpus_dataset_files,
        corpus_sae_files,
        tokens="data/external/{corpus_dataset}/tokens.csv",
    output:
        "data/activations/{corpus_dataset}/{custom_model}/{layer}.parquet",
    log:
        "logs/external/{corpus_dataset}_{custom_model}_{layer}.log",
    benchmark:
        "logs/benchmarks/external_{corpus_dataset}_{custom_model}_{layer}.tsv"
    conda:
        "../../environment.yml"
    threads: 2
    resources:
        mem_mb=8000,
        gpu=EXTERNAL_GPUS,
    params:
        step=step_version("external_corpus_activations"),
        dataset=corpus_dataset_spec,
        model=custom_model_spec,
        sae=corpus_sae_folder,
        runtime=EXTERNAL_RUNTIME,
    script:
        "../scripts/step.py"


rule external_corpus_stream:
    input:
        corpus_stream_files,
    output:
        tokens="data/external/{corpus_dataset}/tokens.npy",
        vocabulary="data/external/{corpus_dataset}/vocabulary.json",
    log:
        "logs/external/{corpus_dataset}_stream.log",
    conda:
        "../../environment.yml"
    params:
        step=step_version("external_corpus_stream"),
        dataset=corpus_stream_spec,
    script:
        "../scripts/step.py"
