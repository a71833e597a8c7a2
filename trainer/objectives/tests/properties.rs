//! Properties over the whole registry: finite-difference gradient checks (f64), boundary
//! behaviour (far-off ratios, padding garbage, equal-reward groups), registry invariants and
//! global normalisers across micro-batches.

use candle_core::{DType, Device, Tensor, Var};
use rlobjectives::advantage::{self, CpgdWeight, Estimator, GpgNorm, Rollout, Whitening};
use rlobjectives::aggregate::{AggMode, GlobalNorm};
use rlobjectives::objectives::{
    LossConfig, LossInputs, NoClipConfig, Objective, ObjectiveConfig, PpoClipConfig, OBJECTIVES,
};
use rlobjectives::Error;

type R<T> = rlobjectives::Result<T>;

/// Small deterministic generator (no external dependency).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64) / ((1u64 << 53) as f64)
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
}

struct Batch {
    old: Vec<f64>,
    new: Vec<f64>,
    adv: Vec<f64>,
    mask: Vec<f64>,
    reference: Vec<f64>,
    b: usize,
    t: usize,
}

/// Random batch: `B` responses of `T` tokens, right padding, one advantage per response (some 0),
/// log-ratios spread over every region.
fn random_batch(seed: u64, b: usize, t: usize, spread: f64) -> Batch {
    let mut g = Lcg(seed);
    let mut out = Batch { old: vec![], new: vec![], adv: vec![], mask: vec![], reference: vec![], b, t };
    for i in 0..b {
        let len = if i % 3 == 2 { t / 2 } else { t };
        let a = match i % 4 {
            3 => 0.0,
            _ => g.range(-2.0, 2.0),
        };
        for j in 0..t {
            let old = g.range(-3.0, -0.1);
            out.old.push(old);
            out.new.push(old + g.range(-spread, spread));
            out.reference.push(old + g.range(-0.5, 0.5));
            out.adv.push(if j < len { a } else { 0.0 });
            out.mask.push(if j < len { 1.0 } else { 0.0 });
        }
    }
    out
}

fn tensor(v: &[f64], b: usize, t: usize) -> R<Tensor> {
    Ok(Tensor::from_vec(v.to_vec(), (b, t), &Device::Cpu)?)
}

fn make_inputs(batch: &Batch, logp: Tensor, sg: Option<&[f64]>) -> R<LossInputs> {
    let (b, t) = (batch.b, batch.t);
    let mut inp =
        LossInputs::new(logp, tensor(&batch.old, b, t)?, tensor(&batch.adv, b, t)?, tensor(&batch.mask, b, t)?)?
            .with_ref(tensor(&batch.reference, b, t)?)?;
    if let Some(sg) = sg {
        inp = inp.with_sg_logp(tensor(sg, b, t)?)?;
    }
    Ok(inp)
}

fn groups(b: usize) -> Vec<usize> {
    (0..b).map(|i| i / 2).collect()
}

/// Central differences of the total loss in `logp`, every stop-gradient copy held at `x̄ = x0`
/// (the loss as `f(x, x̄)` of the live log-prob and its stop-gradient copy), against candle's autograd.
fn fd_check(name: &str, cfg: &LossConfig, batch: &Batch) -> R<()> {
    let (b, t) = (batch.b, batch.t);
    let ids = groups(b);
    let var = Var::from_tensor(&tensor(&batch.new, b, t)?)?;
    let inp = make_inputs(batch, var.as_tensor().clone(), None)?;
    let out = cfg.loss(&inp, Some(&ids))?;
    let grads = out.total.backward()?;
    let g = grads.get(&var).map(|g| g.flatten_all().and_then(|g| g.to_vec1::<f64>()));
    let g = match g {
        Some(g) => g?,
        None => panic!("{name}: logp got no gradient"),
    };
    let f = |x: &[f64]| -> R<f64> {
        let inp = make_inputs(batch, tensor(x, b, t)?, Some(&batch.new))?;
        Ok(cfg.loss(&inp, Some(&ids))?.total.to_scalar::<f64>()?)
    };
    let h = 1e-6;
    for k in 0..b * t {
        if batch.mask[k] == 0.0 {
            assert_eq!(g[k], 0.0, "{name}: padding token {k} got gradient");
            continue;
        }
        let mut xp = batch.new.clone();
        xp[k] += h;
        let mut xm = batch.new.clone();
        xm[k] -= h;
        let fd = (f(&xp)? - f(&xm)?) / (2.0 * h);
        let tol = 1e-6 * (1.0 + fd.abs());
        assert!((fd - g[k]).abs() <= tol, "{name}: token {k}: autograd {} vs finite difference {fd}", g[k]);
    }
    Ok(())
}

#[test]
fn finite_difference_gradients_for_every_objective() -> R<()> {
    for (seed, spread) in [(1, 0.6), (7, 1.5)] {
        let batch = random_batch(seed, 6, 5, spread);
        for obj in OBJECTIVES {
            let cfg = obj.defaults();
            // Give every recipe the extra terms too, so they are checked as well.
            let cfg = if cfg.objective.is_sequence_level() {
                cfg
            } else {
                LossConfig {
                    drift: cfg.drift.or(Some(rlobjectives::objectives::DriftConfig { coef: 0.1, clip: 0.5 })),
                    ..cfg
                }
            };
            fd_check(obj.name, &cfg, &batch)?;
        }
    }
    // Each reference-KL estimator through the loss.
    let batch = random_batch(3, 4, 4, 0.8);
    for est in [
        rlobjectives::kl::KlEstimator::K1,
        rlobjectives::kl::KlEstimator::K2,
        rlobjectives::kl::KlEstimator::K3,
        rlobjectives::kl::KlEstimator::LowVarK3,
        rlobjectives::kl::KlEstimator::K3Plus,
    ] {
        let cfg = LossConfig {
            ref_kl: Some(rlobjectives::kl::RefKl { estimator: est, coef: 0.3 }),
            ..Objective::from_name("ppo")?.defaults()
        };
        fd_check(est.name(), &cfg, &batch)?;
    }
    Ok(())
}

fn assert_finite(label: &str, v: &[f64]) {
    assert!(v.iter().all(|x| x.is_finite()), "{label}: non-finite values {v:?}");
}

#[test]
fn far_off_ratios_masked_garbage_and_equal_rewards_stay_finite() -> R<()> {
    for dtype in [DType::F64, DType::F32] {
        for spread in [30.0, 300.0] {
            let mut batch = random_batch(11, 6, 4, spread);
            // Padding holds garbage a model might produce there.
            for k in 0..batch.mask.len() {
                if batch.mask[k] == 0.0 {
                    batch.new[k] = f64::NEG_INFINITY;
                    batch.old[k] = f64::NAN;
                    batch.reference[k] = f64::INFINITY;
                }
            }
            let (b, t) = (batch.b, batch.t);
            let cast = |v: &[f64]| -> R<Tensor> { Ok(tensor(v, b, t)?.to_dtype(dtype)?) };
            for obj in OBJECTIVES {
                let var = Var::from_tensor(&cast(&batch.new)?)?;
                let inp =
                    LossInputs::new(var.as_tensor().clone(), cast(&batch.old)?, cast(&batch.adv)?, cast(&batch.mask)?)?
                        .with_ref(cast(&batch.reference)?)?;
                let out = obj.defaults().loss(&inp, Some(&groups(b)))?;
                let total = out.total.to_dtype(DType::F64)?.to_scalar::<f64>()?;
                assert!(total.is_finite(), "{} {dtype:?} spread {spread}: loss {total}", obj.name);
                let g = out.total.backward()?;
                let g = g.get(&var).expect("gradient").to_dtype(DType::F64)?.flatten_all()?.to_vec1::<f64>()?;
                assert_finite(obj.name, &g);
                for (gk, mk) in g.iter().zip(&batch.mask) {
                    if *mk == 0.0 {
                        assert_eq!(*gk, 0.0, "{}: padding gradient", obj.name);
                    }
                }
            }
        }
    }
    Ok(())
}

#[test]
fn equal_reward_groups_give_zero_advantage_and_no_nan() -> R<()> {
    let rewards = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.3, 0.3];
    let groups = [0, 0, 0, 1, 1, 1, 2, 2];
    let lengths = [3, 2, 1, 2, 2, 2, 4, 1];
    let kl: Vec<Vec<f64>> = lengths.iter().map(|&l| vec![0.0; l]).collect();
    let ro = Rollout { rewards: &rewards, groups: &groups, lengths: &lengths, kl: Some(&kl) };
    let estimators = [
        Estimator::GroupNorm { eps_std: 1e-6, unbiased: true },
        Estimator::MeanCentred,
        Estimator::Loo { kl_coef: 0.0, whitening: None },
        Estimator::Gpg { f_norm: GpgNorm::One },
        Estimator::Gpg { f_norm: GpgNorm::Std },
        Estimator::Cpgd { weight: CpgdWeight::Equal },
        Estimator::Cpgd { weight: CpgdWeight::Std { eps: 1e-6 } },
        Estimator::Cpgd { weight: CpgdWeight::ClipFilterLike { cap: 3.0 } },
        Estimator::Opo,
    ];
    for est in estimators {
        let a = advantage::compute(&est, &ro)?;
        assert!(a.iter().flatten().all(|&v| v == 0.0), "{est}: {a:?}");
    }
    for est in [
        Estimator::ReinforcePPBaseline { whitening: Whitening::Biased },
        Estimator::ReinforcePPBaseline { whitening: Whitening::Unbiased },
        Estimator::Loo { kl_coef: 0.1, whitening: Some(Whitening::Biased) },
    ] {
        let a = advantage::compute(&est, &ro)?;
        assert_finite(&est.to_string(), &a.concat());
    }
    assert_eq!(advantage::frac_zero_std_groups(&rewards, &groups), 1.0);
    // A batch that is all zero-advantage and fully masked rows: loss 0, no NaN.
    let dev = Device::Cpu;
    let var = Var::new(&[[-1.0f64, -2.0], [-0.5, -0.1]], &dev)?;
    let z = Tensor::zeros((2, 2), DType::F64, &dev)?;
    let inp = LossInputs::new(var.as_tensor().clone(), var.as_tensor().detach(), z.clone(), z)?;
    for obj in OBJECTIVES {
        let cfg = LossConfig { ref_kl: None, ..obj.defaults() };
        let out = cfg.loss(&inp, Some(&[0, 1]))?;
        assert_eq!(out.total.to_scalar::<f64>()?, 0.0, "{}", obj.name);
    }
    Ok(())
}

#[test]
fn registry_names_docs_and_errors() -> R<()> {
    let names = Objective::names();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "duplicate names");
    let mut rows: Vec<u8> = OBJECTIVES.iter().map(|o| o.row).collect();
    rows.dedup();
    assert_eq!(rows, (1..=26).collect::<Vec<u8>>(), "all 26 families, in order");
    for o in OBJECTIVES {
        let year = o
            .paper
            .split(|c: char| !c.is_ascii_digit())
            .any(|w| w.len() == 4 && (w.starts_with("19") || w.starts_with("20")));
        assert!(year && o.paper.len() > 10, "{}: paper citation missing a year: {}", o.name, o.paper);
        assert!(!o.formula.is_empty() && !o.title.is_empty(), "{}", o.name);
        assert!(o.name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{}", o.name);
        assert_eq!(Objective::from_name(o.name)?.name, o.name);
        o.defaults().validate()?;
    }
    match Objective::from_name("grpoo") {
        Err(Error::UnknownObjective { name, suggestion, valid }) => {
            assert_eq!((name.as_str(), suggestion), ("grpoo", Some("grpo")), "did you mean");
            for n in &names {
                assert!(valid.split(", ").any(|v| v == *n), "{n} missing from the error");
            }
        }
        other => panic!("expected UnknownObjective, got {other:?}"),
    }
    Ok(())
}

#[test]
fn registry_defaults_follow_the_papers() -> R<()> {
    let d = |n: &str| Objective::from_name(n).map(|o| o.defaults());
    assert_eq!(
        d("dapo")?.objective,
        ObjectiveConfig::PpoClip(PpoClipConfig { eps_low: 0.2, eps_high: 0.28, dual_clip: None })
    );
    assert_eq!(d("grpo")?.agg, AggMode::SeqMeanTokenMean);
    assert_eq!(d("cpgd")?.agg, AggMode::GroupTokenMean);
    assert_eq!(d("cpgd-official")?.agg, AggMode::SeqMeanTokenMean);
    let drift = d("cpgd")?.drift.expect("cpgd has drift");
    assert_eq!((drift.coef, drift.clip), (0.01, 2.0));
    assert!(d("cpg")?.drift.is_none());
    assert!(matches!(d("dgpo")?.objective, ObjectiveConfig::Dgpo(c) if c.n == 1.0 && c.m == 2.0));
    assert!(matches!(d("gspo")?.objective, ObjectiveConfig::Gspo(c) if c.eps_low == 3e-4 && c.eps_high == 4e-4));
    assert!(matches!(d("ce-gppo")?.objective, ObjectiveConfig::Gppo(c) if c.beta1 == 0.75 && c.beta2 == 1.0));
    // DGPO (arXiv:2603.14389): eq. 10 normalises per prompt group; its CISPO has 0.2/0.2 bounds.
    assert_eq!(d("dgpo")?.agg, AggMode::GroupTokenMean);
    assert!(matches!(d("cispo")?.objective, ObjectiveConfig::Cispo(c) if c.eps_low == Some(0.2) && c.eps_high == 0.2));
    assert_eq!(d("dr-grpo")?.advantage, Estimator::MeanCentred);
    // None of the three papers ran GRPO with a reference KL.
    assert_eq!(d("grpo")?.ref_kl, None);
    // The CPGD paper's baselines average per sequence; its RLOO whitens the KL-shaped return.
    for name in ["grpo-dual-clip", "grpo-no-clip", "grpo-drift", "reinforce-pp", "rloo-ppo"] {
        assert_eq!(d(name)?.agg, AggMode::SeqMeanTokenMean, "{name}");
    }
    assert_eq!(
        d("rloo-ppo")?.advantage,
        Estimator::Loo { kl_coef: 0.01, whitening: Some(rlobjectives::advantage::Whitening::Biased) }
    );
    Ok(())
}

#[test]
fn table_lists_every_objective_with_defaults() {
    let table = Objective::render_table();
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), OBJECTIVES.len() + 2);
    for o in OBJECTIVES {
        assert!(lines.iter().any(|l| l.starts_with(&format!("| {} |", o.name))), "{} missing", o.name);
    }
    let dgpo = lines.iter().find(|l| l.starts_with("| dgpo |")).copied().unwrap_or_default();
    assert!(dgpo.contains("n=1 m=2") && dgpo.contains("group-token-mean") && dgpo.contains("eq. 10"), "{dgpo}");
    let cpgd = lines.iter().find(|l| l.starts_with("| cpgd |")).copied().unwrap_or_default();
    assert!(cpgd.contains("drift α=0.01 c=2") && cpgd.contains("group-token-mean"), "{cpgd}");
}

#[test]
fn misuse_fails_loudly() -> R<()> {
    let batch = random_batch(5, 2, 3, 0.3);
    let inp = make_inputs(&batch, tensor(&batch.new, 2, 3)?, None)?;
    // Wrong config family for an objective.
    let dgpo = Objective::from_name("dgpo")?;
    assert!(matches!(dgpo.per_token(&inp, &ObjectiveConfig::NoClip(NoClipConfig)), Err(Error::ConfigMismatch { .. })));
    // Sequence-level loss with a token aggregation.
    let gspo = LossConfig { agg: AggMode::TokenMean, ..Objective::from_name("gspo")?.defaults() };
    assert!(matches!(gspo.loss(&inp, None), Err(Error::InvalidConfig(_))));
    // A reference-KL term without logp_ref.
    let no_ref = LossInputs::new(inp.logp.clone(), inp.logp_old.clone(), inp.advantages.clone(), inp.mask.clone())?;
    match Objective::from_name("reinforce-pp-baseline")?.defaults().loss(&no_ref, None) {
        Err(Error::InvalidInput(msg)) => assert!(msg.contains("logp_ref"), "{msg}"),
        other => panic!("expected InvalidInput, got {other:?}"),
    }
    // Bad hyper-parameters and shapes.
    let bad = LossConfig {
        objective: ObjectiveConfig::PpoClip(PpoClipConfig { eps_low: -0.1, ..PpoClipConfig::default() }),
        ..Objective::from_name("ppo")?.defaults()
    };
    assert!(bad.loss(&inp, None).is_err());
    let dual = LossConfig {
        objective: ObjectiveConfig::PpoClip(PpoClipConfig { dual_clip: Some(0.5), ..PpoClipConfig::default() }),
        ..Objective::from_name("ppo")?.defaults()
    };
    assert!(dual.loss(&inp, None).is_err());
    assert!(
        LossInputs::new(inp.logp.clone(), tensor(&[0.0; 4], 2, 2)?, inp.advantages.clone(), inp.mask.clone()).is_err()
    );
    Ok(())
}

#[test]
fn global_normalisers_make_micro_batches_add_up() -> R<()> {
    let batch = random_batch(21, 8, 5, 0.5);
    let ids = groups(8);
    let full = make_inputs(&batch, tensor(&batch.new, 8, 5)?, None)?;
    let lengths: Vec<usize> = batch.mask.chunks(5).map(|r| r.iter().filter(|&&m| m != 0.0).count()).collect();
    let global = GlobalNorm::from_lengths(&lengths, Some(&ids))?;
    for mode in AggMode::ALL {
        let cfg = LossConfig { agg: mode, ..Objective::from_name("cpgd")?.defaults() };
        let whole = cfg.loss(&full, Some(&ids))?.total.to_scalar::<f64>()?;
        let mut sum = 0.0;
        for (lo, hi) in [(0usize, 3usize), (3, 8)] {
            let part = |v: &[f64]| tensor(&v[lo * 5..hi * 5], hi - lo, 5);
            let inp = LossInputs::new(part(&batch.new)?, part(&batch.old)?, part(&batch.adv)?, part(&batch.mask)?)?;
            let out = cfg.loss_with(&inp, Some(&ids[lo..hi]), Some(&global))?;
            sum += out.total.to_scalar::<f64>()?;
        }
        assert!((sum - whole).abs() < 1e-12, "{mode}: micro-batches {sum} vs whole {whole}");
    }
    Ok(())
}

#[test]
#[ignore = "prints the registry table; run with --ignored --nocapture"]
fn print_table() {
    println!("{}", Objective::render_table());
}

#[test]
fn extra_terms_combine_as_documented() -> R<()> {
    let batch = random_batch(9, 4, 5, 0.4);
    let ids = groups(4);
    let scalar = |t: &Tensor| -> R<f64> { Ok(t.to_scalar::<f64>()?) };
    let inp = make_inputs(&batch, tensor(&batch.new, 4, 5)?, None)?;
    // GRPO with DeepSeekMath's reference KL: policy + β·k3 to the reference.
    let grpo = LossConfig {
        ref_kl: Some(rlobjectives::kl::RefKl { estimator: rlobjectives::kl::KlEstimator::K3, coef: 0.04 }),
        ..Objective::from_name("grpo")?.defaults()
    };
    let out = grpo.loss(&inp, Some(&ids))?;
    let kl = out.kl.as_ref().map(scalar).transpose()?.unwrap_or(f64::NAN);
    assert!(kl > 0.0, "k3 is positive off the reference: {kl}");
    assert!((scalar(&out.total)? - scalar(&out.policy)? - 0.04 * kl).abs() < 1e-12);
    // CPGD: policy + α·Agg(E).
    let cpgd = Objective::from_name("cpgd")?.defaults();
    let out = cpgd.loss(&inp, Some(&ids))?;
    let drift = out.drift.as_ref().map(scalar).transpose()?.unwrap_or(f64::NAN);
    assert!((scalar(&out.total)? - scalar(&out.policy)? - 0.01 * drift).abs() < 1e-12);
    // Entropy bonus: policy - c_H·Agg(H), and the metric reports the mean entropy.
    let h = tensor(&[0.5; 20], 4, 5)?;
    let inp_h = inp.clone().with_entropy(h)?;
    let cfg = LossConfig { entropy_coef: 0.1, ..Objective::from_name("dapo")?.defaults() };
    let out = cfg.loss(&inp_h, None)?;
    let ent = out.entropy.as_ref().map(scalar).transpose()?.unwrap_or(f64::NAN);
    assert!((ent - 0.5).abs() < 1e-12, "token-mean of a constant entropy: {ent}");
    assert!((scalar(&out.total)? - scalar(&out.policy)? + 0.05).abs() < 1e-12);
    let m = rlobjectives::metrics::batch_metrics(&inp_h, &out.terms.regions)?;
    assert_eq!(m.entropy, Some(0.5));
    // Entropy bonus without an entropy input is an error.
    assert!(cfg.loss(&inp, None).is_err());
    Ok(())
}
