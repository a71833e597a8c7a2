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

/// Each operator of every family on up to `per_operator` bases: the bases in a seeded order keyed
/// by the operator's name and each base's origin, the first ones the operator applies to.
/// Operators run in parallel; the result is in family and operator order and does not depend on
/// the thread count.
pub fn run(bases: &[Base], per_operator: usize) -> Vec<Tally> {
    let jobs: Vec<(&'static Family, &'static Operator)> =
        families::all().into_iter().flat_map(|f| f.operators.iter().map(move |op| (f, op))).collect();
    jobs.into_par_iter().map(|(family, operator)| tally(family, operator, bases, per_operator)).collect()
}

/// The seed of one operator on one base: a function of the operator's name and the base's origin
/// (`real_generations_dev:728`), never of its index, so a base that joins or leaves the set (the
/// verifier now scores its row differently) moves no other base's draw.
fn base_seed(name: &str, origin: &str) -> u64 {
    derive_seed(SEED, &[fnv1a(name.as_bytes()), fnv1a(origin.as_bytes())])
}

/// The seeded order in which an operator visits the bases: by [`base_seed`], so the order of any
/// two bases does not depend on which others are in the set.
fn order(name: &str, bases: &[Base]) -> Vec<usize> {
    let mut order: Vec<(u64, usize)> = bases.iter().enumerate().map(|(i, b)| (base_seed(name, &b.origin), i)).collect();
    order.sort_unstable();
    order.into_iter().map(|(_, i)| i).collect()
}

fn tally(family: &'static Family, operator: &'static Operator, bases: &[Base], per_operator: usize) -> Tally {
    let cfg = Config::default();
    let mut t = Tally { family, operator, variants: 0, misses: Vec::new() };
    for i in order(operator.name, bases) {
        if t.variants == per_operator {
            break;
        }
        let base = &bases[i];
        let mut rng = Rng::new(base_seed(operator.name, &base.origin));
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
