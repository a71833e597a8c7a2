//! Where the model's turn ends: the first end-of-turn, end-of-text or padding token of the common
//! chat templates.
//!
//! Frameworks decode with special tokens kept (OpenRLHF sends `A: 15</s>`), and models that run
//! past their turn invent the next one (`... is $\frac{5}{3}$. <|im_start|>user Another problem
//! ... \boxed{8}`). Either way the answer is what comes before the first such token: the token is
//! not part of the answer, and whatever follows it is not the model's answer to this prompt.
//!
//! Tokens before any text (a template prefix such as `<|im_start|>`, left padding) are skipped.
//! The search is one `memchr` pass per token opener (`<`, `[`), so the cost is linear.

/// Tokens that end the model's turn or the text, and padding, by template family.
const END_TOKENS: &[&str] = &[
    // Llama 2, Mistral, SmolLM, many SentencePiece models: end of sequence, and a new user turn.
    "</s>",
    "[INST]",
    // Llama 3 / 3.1+
    "<|eot_id|>",
    "<|eom_id|>",
    "<|end_of_text|>",
    "<|start_header_id|>",
    "<|finetune_right_pad_id|>",
    // Qwen, ChatML, SmolLM2
    "<|im_end|>",
    "<|im_start|>",
    "<|endoftext|>",
    // Gemma
    "<end_of_turn>",
    "<start_of_turn>",
    "<eos>",
    "<pad>",
    // Phi-3/4 and gpt-oss (harmony)
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|user|>",
    "<|start|>",
    // DeepSeek (full-width bars and the `▁` of its tokenizer)
    "<｜end▁of▁sentence｜>",
    "<｜User｜>",
    "<|end_of_sentence|>",
    // Cohere Command
    "<|END_OF_TURN_TOKEN|>",
    "<|START_OF_TURN_TOKEN|>",
    // Generic padding
    "<|pad|>",
    "[PAD]",
];

/// `response` from where its text starts (tokens before it, a template prefix, and the spaces
/// around them are skipped) up to the first end-of-turn or padding token after that.
pub(crate) fn model_turn(response: &str) -> &str {
    let b = response.as_bytes();
    let token_at = |p: usize| {
        // Every token starts `<|`, `<｜`, `</`, `<` + a letter, or `[` + a capital: a `<` of a
        // comparison (`a < b`) is dismissed by its next byte.
        let next = *b.get(p + 1)?;
        let maybe = next == b'|' || next == b'/' || next == 0xEF || next.is_ascii_alphabetic();
        if !maybe {
            return None;
        }
        END_TOKENS.iter().find(|t| b[p..].starts_with(t.as_bytes()))
    };
    let mut text_at = 0;
    loop {
        while text_at < b.len() && b[text_at].is_ascii_whitespace() {
            text_at += 1;
        }
        match token_at(text_at) {
            Some(t) if text_at < b.len() => text_at += t.len(),
            _ => break,
        }
    }
    // `[` is common in LaTeX (`\[`): its two tokens are found by SIMD search, `<` byte by byte.
    static INST: super::scan::Needle = super::scan::Needle::new(b"[INST]");
    static PAD: super::scan::Needle = super::scan::Needle::new(b"[PAD]");
    let rest = &b[text_at..];
    let bracket = [INST.first(rest), PAD.first(rest)].into_iter().flatten().min().map(|k| text_at + k);
    let limit = bracket.unwrap_or(b.len());
    let mut from = text_at;
    while let Some(off) = memchr::memchr(b'<', &b[from..limit]) {
        let p = from + off;
        if token_at(p).is_some() {
            return &response[text_at..p];
        }
        from = p + 1;
    }
    &response[text_at..limit]
}

#[cfg(test)]
mod tests {
    use super::model_turn;

    #[test]
    fn cuts_at_the_first_end_token_after_text() {
        assert_eq!(model_turn("A: 15</s>"), "A: 15");
        assert_eq!(model_turn("The answer is $5$.<|eot_id|><|eot_id|>"), "The answer is $5$.");
        assert_eq!(model_turn("so 3<|im_end|>\n<|im_start|>user\nnext \\boxed{8}"), "so 3");
        assert_eq!(model_turn("x <end_of_turn>\n<start_of_turn>user"), "x ");
        assert_eq!(model_turn("7<|return|>"), "7");
        assert_eq!(model_turn("7<|end|><|endoftext|>"), "7");
        assert_eq!(model_turn("7 <eos><pad><pad>"), "7 ");
        assert_eq!(model_turn("7<|eom_id|>"), "7");
        assert_eq!(model_turn("7<｜end▁of▁sentence｜>"), "7");
        assert_eq!(model_turn("7<|END_OF_TURN_TOKEN|>"), "7");
        assert_eq!(model_turn("7 [INST] next question"), "7 ");
    }

    #[test]
    fn leading_tokens_and_lookalikes_cut_nothing() {
        assert_eq!(model_turn("<|im_start|>assistant\nThe answer is 4<|im_end|>"), "assistant\nThe answer is 4");
        assert_eq!(model_turn("  </s> 4"), "4");
        assert_eq!(model_turn("<pad><pad>  5"), "5");
        assert_eq!(model_turn("$a < b$ and [1, 2]"), "$a < b$ and [1, 2]");
        assert_eq!(model_turn("<answer>3</answer>"), "<answer>3</answer>");
        assert_eq!(model_turn(""), "");
        assert_eq!(model_turn("  "), "");
    }
}
