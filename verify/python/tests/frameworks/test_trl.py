"""TRL's own GRPOTrainer, two steps on a tiny local model, with the rlverify reward function.
Skipped when trl is not installed."""

import pytest

trl = pytest.importorskip("trl", reason="trl is not installed (verify/python/frameworks/venvs.sh)")
transformers = pytest.importorskip("transformers")
datasets = pytest.importorskip("datasets")
tokenizers = pytest.importorskip("tokenizers")

from rlverify.trl import reward_function  # noqa: E402

WORDS = "what is 1 2 3 4 5 6 7 8 9 0 + = the answer boxed { } \\ so".split()


def tiny_model(path):
    """A Qwen2 with two small layers and a word-level tokenizer, saved where TRL loads it."""
    vocab = {w: k for k, w in enumerate(["<pad>", "<unk>", "<|im_end|>"] + WORDS)}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.WhitespaceSplit()
    tok.decoder = tokenizers.decoders.WordPiece(prefix="##")  # joins words with spaces
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>",
                                                eos_token="<|im_end|>")
    config = transformers.Qwen2Config(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64,
                                      pad_token_id=0, eos_token_id=2, bos_token_id=2, tie_word_embeddings=True)
    transformers.Qwen2ForCausalLM(config).save_pretrained(path)
    fast.save_pretrained(path)
    return str(path)


def test_grpo_two_steps(tmp_path):
    model = tiny_model(tmp_path / "model")
    rows = [{"prompt": f"what is {a} + {b} =", "answer": str(a + b) if a + b < 10 else None}
            for a in range(1, 5) for b in range(1, 3)]
    dataset = datasets.Dataset.from_list(rows)
    calls = []
    accuracy = reward_function("answer")

    def recorded(*args, **kwargs):
        out = accuracy(*args, **kwargs)
        calls.append((kwargs, out))
        return out

    recorded.__name__ = accuracy.__name__
    args = trl.GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=2, per_device_train_batch_size=4,
                          num_generations=2, max_completion_length=6, learning_rate=1e-3, logging_steps=1,
                          report_to=[], use_cpu=True, bf16=False, save_strategy="no", seed=0,
                          log_completions=False)
    trainer = trl.GRPOTrainer(model=model, reward_funcs=[recorded], args=args, train_dataset=dataset)
    trainer.train()
    assert len(calls) >= 2
    for kwargs, out in calls:
        n = len(kwargs["completions"])
        assert len(out) == n and all(r is None or r in (0.0, 1.0) for r in out)
    # Where TRL passes `log_extra` (read from its own source), the completions table gets the
    # answer and the status.
    import inspect

    passes_log_extra = "log_extra" in inspect.getsource(trl.GRPOTrainer._calculate_rewards)
    assert passes_log_extra == any("log_extra" in kwargs for kwargs, _ in calls)
    if passes_log_extra:
        extra = trainer._logs["extra"]
        statuses = list(extra["rlverify_answer_status"])
        assert statuses and set(statuses) <= {"correct", "wrong", "no_answer", "ambiguous", "unparsable", "limit",
                                              "invalid_gold", "no_gold"}
        assert len(extra["rlverify_answer_extracted"]) == len(statuses)
