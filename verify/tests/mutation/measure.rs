//! Runs every operator on a seeded sample of bases and tallies the verifier's verdicts.

use super::{families, Base, Expect, Family, Operator, Rng, Variant, SEED};
use rayon::prelude::*;
use rlbase::{derive_seed, fnv1a};
use rlverify::{score, Config, Score};

/// A variant the verifier got wrong: a must-be-wrong one accepted, a must-stay-right one rejected.
pub struct Miss {
    pub origin: String,
    pub variant: Variant,
    pub score: Score,
}

/// The verdicts on one operator's variants.
pub struct Tally {
    pub family: &'static Family,
    pub operator: &'static Operator,
    /// Variants made (at most the per-operator bound).
    pub variants: usize,
    pub misses: Vec<Miss>,
}

impl Tally {
    /// Must-be-wrong variants accepted, or must-stay-right variants kept.
    pub fn counted(&self) -> usize {
        match self.operator.expect {
            Expect::Wrong => self.misses.len(),
            Expect::Right => self.variants - self.misses.len(),
        }
    }
}

/// Each operator of every family on up to `per_operator` bases: the bases in a shuffled order
/// seeded by the operator's name, the first ones the operator applies to. Operators run in
/// parallel; the result is in family and operator order and does not depend on the thread count.
pub fn run(bases: &[Base], per_operator: usize) -> Vec<Tally> {
    let jobs: Vec<(&'static Family, &'static Operator)> =
        families::all().into_iter().flat_map(|f| f.operators.iter().map(move |op| (f, op))).collect();
    jobs.into_par_iter().map(|(family, operator)| tally(family, operator, bases, per_operator)).collect()
}

/// The seeded order in which an operator visits the bases.
fn order(name: &str, n: usize) -> Vec<usize> {
    let mut rng = Rng::new(derive_seed(SEED, &[fnv1a(name.as_bytes())]));
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.below(i + 1));
    }
    order
}

fn tally(family: &'static Family, operator: &'static Operator, bases: &[Base], per_operator: usize) -> Tally {
    let cfg = Config::default();
    let mut t = Tally { family, operator, variants: 0, misses: Vec::new() };
    for i in order(operator.name, bases.len()) {
        if t.variants == per_operator {
            break;
        }
        let base = &bases[i];
        let mut rng = Rng::new(derive_seed(SEED, &[fnv1a(operator.name.as_bytes()), i as u64]));
        let Some(variant) = (operator.apply)(base, &mut rng) else { continue };
        t.variants += 1;
        let s = score(&variant.response, &variant.gold, &cfg);
        if s.correct != (operator.expect == Expect::Right) {
            t.misses.push(Miss { origin: base.origin.clone(), variant, score: s });
        }
    }
    t
}

/// A family's totals: `(wrong accepted, wrong variants, right kept, right variants)`.
pub fn family_totals(tallies: &[Tally], family: &str) -> (usize, usize, usize, usize) {
    tallies.iter().filter(|t| t.family.name == family).fold((0, 0, 0, 0), |(wa, wn, rk, rn), t| {
        match t.operator.expect {
            Expect::Wrong => (wa + t.counted(), wn + t.variants, rk, rn),
            Expect::Right => (wa, wn, rk + t.counted(), rn + t.variants),
        }
    })
}
