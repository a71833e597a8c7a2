//! Maj@K: majority voting over the final answers of a problem's K samples.
//!
//! Answers are grouped by the verifier's equivalence: a sample joins the group of an identical
//! answer (same trimmed text), else the first group whose representative (the group's first answer)
//! is [`rlverify::equivalent`] to it, else it opens a new group. Samples without an extracted
//! answer do not vote.
//!
//! Tie policy: the largest group wins; among groups of equal size, the one whose earliest sample
//! has the smallest sample index wins (the "earliest sample" rule, as in Qwen2.5-Math's evaluation
//! where `Counter.most_common` keeps first-seen order). Maj@K for a problem is then 1 or 0, never a
//! fraction, and does not depend on the order in which samples arrived.

use rlverify::{equivalent, Budget, EquivOptions, Expr, Limits, Verdict};
use std::collections::HashMap;

/// One sample's vote: its extracted answer, parsed when possible, and whether it was correct.
#[derive(Clone, Debug)]
pub struct Ballot {
    /// Sample index within the problem (0-based); orders ties.
    pub sample: usize,
    /// The extracted answer text.
    pub text: String,
    /// The parsed answer, when the parser accepted it.
    pub parsed: Option<Expr>,
    /// Whether this answer was scored correct against the gold.
    pub correct: bool,
}

/// A group of equivalent answers.
#[derive(Clone, Debug)]
pub struct VoteGroup {
    /// The first answer that opened the group (the representative compared with new ballots).
    pub text: String,
    parsed: Option<Expr>,
    /// Number of ballots in the group.
    pub count: usize,
    /// Smallest sample index in the group.
    pub first_sample: usize,
    /// Whether the representative answer is correct.
    pub correct: bool,
}

/// The ballot box of one problem.
#[derive(Clone, Debug, Default)]
pub struct Votes {
    groups: Vec<VoteGroup>,
    /// Trimmed answer text -> group, so repeated answers skip the equivalence checks.
    by_text: HashMap<String, usize>,
}

impl Votes {
    /// An empty ballot box.
    pub fn new() -> Self {
        Votes::default()
    }

    /// Add one ballot, joining the first equivalent group or opening a new one.
    pub fn add(&mut self, ballot: Ballot, opts: &EquivOptions, limits: &Limits) {
        let key = ballot.text.trim();
        let found = self.by_text.get(key).copied().or_else(|| {
            let parsed = ballot.parsed.as_ref()?;
            self.groups.iter().position(|g| {
                g.parsed.as_ref().is_some_and(|rep| {
                    let mut budget = Budget::new(limits);
                    equivalent(rep, parsed, opts, &mut budget).verdict == Verdict::Equal
                })
            })
        });
        match found {
            Some(i) => {
                let g = &mut self.groups[i];
                g.count += 1;
                g.first_sample = g.first_sample.min(ballot.sample);
                if !self.by_text.contains_key(key) {
                    self.by_text.insert(key.to_string(), i);
                }
            }
            None => {
                self.by_text.insert(key.to_string(), self.groups.len());
                self.groups.push(VoteGroup {
                    text: ballot.text,
                    parsed: ballot.parsed,
                    count: 1,
                    first_sample: ballot.sample,
                    correct: ballot.correct,
                });
            }
        }
    }

    /// The winning group: most votes, ties to the group holding the earliest sample.
    pub fn winner(&self) -> Option<&VoteGroup> {
        self.groups.iter().min_by_key(|g| (std::cmp::Reverse(g.count), g.first_sample))
    }

    /// Maj@K of this problem: 1.0 when the winning answer is correct, else 0.0 (also when no sample
    /// has an answer).
    pub fn maj_correct(&self) -> bool {
        self.winner().is_some_and(|g| g.correct)
    }

    /// The groups, in order of creation.
    pub fn groups(&self) -> &[VoteGroup] {
        &self.groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vote(answers: &[(usize, &str, bool)]) -> Votes {
        let mut v = Votes::new();
        let limits = Limits::default();
        for &(sample, text, correct) in answers {
            let parsed = rlverify::parse(text, &limits).ok();
            v.add(Ballot { sample, text: text.to_string(), parsed, correct }, &EquivOptions::default(), &limits);
        }
        v
    }

    #[test]
    fn plain_majority() {
        let v = vote(&[(0, "7", false), (1, "5", true), (2, "5", true)]);
        assert_eq!(v.winner().map(|g| g.text.as_str()), Some("5"));
        assert!(v.maj_correct());
    }

    #[test]
    fn tie_goes_to_the_earliest_sample() {
        // Two votes each; "7" holds sample 0, so it wins and Maj@K is 0.
        let v = vote(&[(0, "7", false), (1, "5", true), (2, "5", true), (3, "7", false)]);
        assert_eq!(v.winner().map(|g| g.text.as_str()), Some("7"));
        assert!(!v.maj_correct());
        // Same ballots arriving in another order: the result does not change.
        let v = vote(&[(3, "7", false), (2, "5", true), (1, "5", true), (0, "7", false)]);
        assert_eq!(v.winner().map(|g| g.text.as_str()), Some("7"));
        // Swap which answer holds sample 0.
        let v = vote(&[(0, "5", true), (1, "7", false), (2, "7", false), (3, "5", true)]);
        assert!(v.maj_correct());
    }

    #[test]
    fn equivalent_answers_share_a_group() {
        // The parser (even the stub) lower-cases text answers, so these are one answer.
        let v =
            vote(&[(0, "Monday", true), (1, "x", false), (2, "monday", true), (3, "x", false), (4, "MONDAY", true)]);
        assert_eq!(v.groups().len(), 2);
        assert_eq!(v.winner().map(|g| g.count), Some(3));
        assert!(v.maj_correct());
    }

    #[test]
    fn no_votes_is_wrong() {
        let v = vote(&[]);
        assert!(v.winner().is_none());
        assert!(!v.maj_correct());
    }
}
