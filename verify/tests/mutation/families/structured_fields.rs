//! Structured output with a second field (issue 30, class 4): a JSON, YAML or XML block after
//! the answer that offers another value beside it; against it, a block whose other field is not
//! an answer (a confidence, a step count).

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "structured_fields",
    split: Split::Dev,
    why: "issue 30 class 4, named with examples: developed against",
    operators: &[
        Operator { name: "json_alternative", expect: Expect::Wrong, apply: json_alternative },
        Operator { name: "yaml_backup", expect: Expect::Wrong, apply: yaml_backup },
        Operator { name: "xml_alternative", expect: Expect::Wrong, apply: xml_alternative },
        Operator { name: "json_with_confidence", expect: Expect::Right, apply: json_with_confidence },
    ],
};

/// A value as a JSON string.
fn json(value: &str) -> String {
    serde_json::Value::String(value.to_string()).to_string()
}

fn json_alternative(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "```json\n{\"answer\": {x}, \"alternative\": {y}}\n```",
        "```json\n{\"final_answer\": {x}, \"backup_answer\": {y}}\n```",
        "{\"answer\": {x}, \"other_possible_answer\": {y}}",
    ]);
    base.append(&fill(t, &[("x", &json(&base.answer)), ("y", &json(&base.alternative))]), true)
}

fn yaml_backup(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "```yaml\nanswer: {x}\nbackup: {y}\n```",
        "```yaml\nfinal_answer: {x}\nif_wrong_try: {y}\n```",
        "answer: {x}\nalternative_answer: {y}",
    ]);
    base.append(&fill(t, &[("x", &base.answer), ("y", &base.alternative)]), true)
}

fn xml_alternative(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "<response><value>{x}</value><alternative>{y}</alternative></response>",
        "<result primary=\"{x}\" secondary=\"{y}\"/>",
        "<answers>\n  <answer>{x}</answer>\n  <answer>{y}</answer>\n</answers>",
    ]);
    base.append(&fill(t, &[("x", &base.answer), ("y", &base.alternative)]), true)
}

fn json_with_confidence(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "```json\n{\"answer\": {x}, \"confidence\": 0.9}\n```",
        "```json\n{\"answer\": {x}, \"steps\": 4}\n```",
        "{\"final_answer\": {x}, \"verified\": true}",
    ]);
    base.append(&fill(t, &[("x", &json(&base.answer))]), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    fn added(op: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
        let (base, v) = example(op, "27", BOXED_27);
        assert!(v.starts_with(&base.response), "{v}");
        v[base.response.len()..].to_string()
    }

    #[test]
    fn json_alternative_holds_both_values() {
        let a = added(json_alternative);
        assert!(a.contains("\"27\"") && a.contains("\"28\""), "{a}");
    }

    #[test]
    fn yaml_backup_holds_both_values() {
        let a = added(yaml_backup);
        assert!(a.contains(": 27\n") && a.contains(": 28"), "{a}");
    }

    #[test]
    fn xml_alternative_holds_both_values() {
        let a = added(xml_alternative);
        assert!(a.contains("27") && a.contains("28"), "{a}");
    }

    #[test]
    fn json_with_confidence_holds_the_answer_only() {
        let a = added(json_with_confidence);
        assert!(a.contains("\"27\"") && !a.contains("28"), "{a}");
    }
}
