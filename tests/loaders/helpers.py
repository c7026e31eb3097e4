"""Small builders shared by the loader tests."""

from pathlib import Path


def save_tiny_bpe_tokenizer(directory: Path, *, pad: bool = False) -> int:
    """A byte-level BPE (GPT-2 style) tokenizer with three merges saved in ``directory``; returns its size."""
    from tokenizers.pre_tokenizers import ByteLevel
    from transformers import GPT2Tokenizer

    vocab = {character: position for position, character in enumerate(sorted(ByteLevel.alphabet()))}
    merges = [("Ġ", "t"), ("h", "e"), ("Ġt", "he")]
    for first, second in merges:
        vocab[first + second] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    tokenizer = GPT2Tokenizer(vocab=vocab, merges=merges, pad_token="<|endoftext|>" if pad else None)
    tokenizer.save_pretrained(directory)
    return len(tokenizer)
