//! Reference test vectors T0-T11 (computed independently, analytically and by finite differences):
//! loss values and gradients w.r.t. `logp` through candle's autograd, within 1e-6 of the reference
//! numbers.

use candle_core::{DType, Device, Tensor, Var};
use rlobjectives::advantage::{self, CpgdWeight, Estimator, GpgNorm, Rollout, Whitening};
use rlobjectives::aggregate::{aggregate, weights, AggMode};
use rlobjectives::kl::{drift_k3, full_kl, kl_ref, KlEstimator};
use rlobjectives::metrics::{batch_metrics, token_entropy, token_logprobs};
use rlobjectives::objectives::{
    cpgd, AspoConfig, CispoConfig, CpgConfig, CpgValue, DgpoConfig, DriftConfig, GmpoConfig, GppoConfig, GspoConfig,
    KlCovConfig, LossConfig, LossInputs, NoClipConfig, Objective, ObjectiveConfig, ObjectiveKind, PgConfig, PgValue,
    PpoClipConfig, SapoConfig, OBJECTIVES,
};
use rlobjectives::objectives::{CfpoConfig, ClipCovConfig};

type R<T> = rlobjectives::Result<T>;

const TOL: f64 = 1e-6;
const OLD: [f64; 9] = [-1.0, -0.7, -2.0, -0.3, -0.2, -1.2, -0.9, -2.5, -3.0];
const NEW: [f64; 9] = [-0.9, -0.48, -1.6, -0.7, -1.7, -1.25, -1.4, -2.0, -1.7];
const ADV: [f64; 9] = [0.5, 1.0, 1.5, 1.0, 2.0, -0.5, -1.0, -1.5, -2.0];

fn close(label: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{label}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= TOL, "{label}[{i}]: got {g:.9}, want {w:.9}\n got {got:?}\nwant {want:?}");
    }
}

/// `[B,T]` inputs from row vectors; returns the `Var` behind `logp`.
fn inputs(new: &[Vec<f64>], old: &[Vec<f64>], adv: &[Vec<f64>], mask: &[Vec<f64>]) -> R<(Var, LossInputs)> {
    let dev = Device::Cpu;
    let t = |rows: &[Vec<f64>]| -> R<Tensor> {
        let b = rows.len();
        let n = rows[0].len();
        Ok(Tensor::from_vec(rows.concat(), (b, n), &dev)?)
    };
    let var = Var::from_tensor(&t(new)?)?;
    let inp = LossInputs::new(var.as_tensor().clone(), t(old)?, t(adv)?, t(mask)?)?;
    Ok((var, inp))
}

fn canonical() -> R<(Var, LossInputs)> {
    inputs(&[NEW.to_vec()], &[OLD.to_vec()], &[ADV.to_vec()], &[vec![1.0; 9]])
}

fn row(t: &Tensor) -> R<Vec<f64>> {
    Ok(t.flatten_all()?.to_vec1::<f64>()?)
}

/// Per-token total loss and `∂(Σ_t ℓ_t)/∂logp` (= per-token g for per-token objectives).
fn loss_and_grad(cfg: &LossConfig, var: &Var, inp: &LossInputs) -> R<(Vec<f64>, Vec<f64>)> {
    let per_tok = cfg.per_token_total(inp)?;
    let grads = per_tok.sum_all()?.backward()?;
    let g = grads.get(var).expect("logp must receive a gradient");
    Ok((row(&per_tok)?, row(g)?))
}

fn recipe(objective: ObjectiveConfig, drift: Option<DriftConfig>) -> LossConfig {
    let base = Objective::from_name("ppo").map(|o| o.defaults()).expect("ppo is registered");
    LossConfig { objective, drift, ref_kl: None, ..base }
}

const DRIFT_TEST: Option<DriftConfig> = Some(DriftConfig { coef: 0.1, clip: 2.0 });

#[test]
fn t1_canonical_tokens_loss_and_gradient() -> R<()> {
    let ppo = |lo, hi, c| ObjectiveConfig::PpoClip(PpoClipConfig { eps_low: lo, eps_high: hi, dual_clip: c });
    let cpg = |value| ObjectiveConfig::Cpg(CpgConfig { eps: 0.2, lambda: 1.0, value });
    let dgpo = |n, m| ObjectiveConfig::Dgpo(DgpoConfig { n, m, ..DgpoConfig::default() });
    #[rustfmt::skip]
    let table: Vec<(&str, LossConfig, [f64; 9], [f64; 9])> = vec![
        ("pg -A logpi", recipe(ObjectiveConfig::Pg(PgConfig { value: PgValue::LogProb }), None),
         [0.45, 0.48, 2.4, 0.7, 3.4, -0.625, -1.4, -3.0, -3.4],
         [-0.5, -1.0, -1.5, -1.0, -2.0, 0.5, 1.0, 1.5, 2.0]),
        ("pg -A rho", recipe(ObjectiveConfig::Pg(PgConfig { value: PgValue::LogRatio }), None),
         [-0.05, -0.22, -0.6, 0.4, 3.0, -0.025, -0.5, 0.75, 2.6],
         [-0.5, -1.0, -1.5, -1.0, -2.0, 0.5, 1.0, 1.5, 2.0]),
        ("ppo 0.2", recipe(ppo(0.2, 0.2, None), None),
         [-0.552585, -1.2, -1.8, -0.670320, -0.446260, 0.475615, 0.8, 2.473082, 7.338593],
         [-0.552585, 0.0, 0.0, -0.670320, -0.446260, 0.475615, 0.0, 2.473082, 7.338593]),
        ("dapo", recipe(ppo(0.2, 0.28, None), None),
         [-0.552585, -1.246077, -1.92, -0.670320, -0.446260, 0.475615, 0.8, 2.473082, 7.338593],
         [-0.552585, -1.246077, 0.0, -0.670320, -0.446260, 0.475615, 0.0, 2.473082, 7.338593]),
        ("dual-clip c=3", recipe(ppo(0.2, 0.2, Some(3.0)), None),
         [-0.552585, -1.2, -1.8, -0.670320, -0.446260, 0.475615, 0.8, 2.473082, 6.0],
         [-0.552585, 0.0, 0.0, -0.670320, -0.446260, 0.475615, 0.0, 2.473082, 0.0]),
        ("no clip", recipe(ObjectiveConfig::NoClip(NoClipConfig), None),
         [-0.552585, -1.246077, -2.237737, -0.670320, -0.446260, 0.475615, 0.606531, 2.473082, 7.338593],
         [-0.552585, -1.246077, -2.237737, -0.670320, -0.446260, 0.475615, 0.606531, 2.473082, 7.338593]),
        ("grpo w/ drift", recipe(ppo(0.2, 0.2, None), DRIFT_TEST),
         [-0.562051, -1.211812, -1.878692, -0.647242, -0.314192, 0.481711, 0.855086, 2.343338, 6.998593],
         [-0.542068, 0.024608, 0.049182, -0.703288, -0.523947, 0.470738, -0.039347, 2.537954, 7.538593]),
        ("pgd", recipe(ObjectiveConfig::Pg(PgConfig { value: PgValue::LogProb }), DRIFT_TEST),
         [0.440535, 0.468188, 2.321308, 0.723078, 3.532068, -0.618904, -1.344914, -3.129744, -3.74],
         [-0.489483, -0.975392, -1.450818, -1.032968, -2.077687, 0.495123, 0.960653, 1.564872, 2.2]),
        ("cpg paper", recipe(cpg(CpgValue::LogRatio), None),
         [-0.05, -0.182322, -0.273482, 0.4, 3.0, -0.025, -0.223144, 0.75, 2.6],
         [-0.5, 0.0, 0.0, -1.0, -2.0, 0.5, 0.0, 1.5, 2.0]),
        ("cpg impl", recipe(cpg(CpgValue::LogProb), None),
         [0.45, 0.517678, 2.726518, 0.7, 3.4, -0.625, -1.123144, -3.0, -3.4],
         [-0.5, 0.0, 0.0, -1.0, -2.0, 0.5, 0.0, 1.5, 2.0]),
        ("cpgd", recipe(cpg(CpgValue::LogRatio), DRIFT_TEST),
         [-0.059465, -0.194133, -0.352174, 0.423078, 3.132068, -0.018904, -0.168058, 0.620256, 2.26],
         [-0.489483, 0.024608, 0.049182, -1.032968, -2.077687, 0.495123, -0.039347, 1.564872, 2.2]),
        ("cfpo", recipe(ObjectiveConfig::Cfpo(CfpoConfig { eps: 0.2 }), None),
         [-0.538759, -1.094692, -1.330644, -0.398598, 2.571373, 0.478588, 0.993576, 4.051229, 42.964317],
         [-0.262006, 0.287076, 3.265135, -1.775275, -2.179691, 0.359635, -0.586725, 10.494786, 105.283007]),
        ("cispo [0.8,1.2]", recipe(ObjectiveConfig::Cispo(CispoConfig { eps_low: Some(0.2), eps_high: 0.2, abs_cap: None }), None),
         [0.497327, 0.576, 2.88, 0.56, 2.72, -0.594518, -1.12, -3.6, -4.08],
         [-0.552585, -1.2, -1.8, -0.8, -1.6, 0.475615, 0.8, 1.8, 2.4]),
        ("cispo no floor 0.28", recipe(ObjectiveConfig::Cispo(CispoConfig { eps_low: None, eps_high: 0.28, abs_cap: None }), None),
         [0.497327, 0.598117, 3.072, 0.469224, 0.758643, -0.594518, -0.849143, -3.84, -4.352],
         [-0.552585, -1.246077, -1.92, -0.670320, -0.446260, 0.475615, 0.606531, 1.92, 2.56]),
        ("gppo", recipe(ObjectiveConfig::Gppo(GppoConfig::default()), None),
         [-0.552585, -1.2, -1.8, -0.670320, -0.446260, 0.475615, 0.8, 2.473082, 7.338593],
         [-0.552585, -1.2, -1.8, -0.670320, -0.446260, 0.475615, 0.8, 2.473082, 7.338593]),
        ("gppo c=10", recipe(ObjectiveConfig::Gppo(GppoConfig { dual_clip: Some(10.0), ..GppoConfig::default() }), None),
         [-0.552585, -1.2, -1.8, -0.670320, -0.446260, 0.475615, 0.8, 2.473082, 7.338593],
         [-0.552585, -1.2, -1.8, -0.670320, -0.446260, 0.475615, 0.8, 2.473082, 7.338593]),
        ("ce-gppo", recipe(ObjectiveConfig::Gppo(GppoConfig::ce_gppo()), None),
         [-0.552585, -1.2, -1.8, -0.670320, -0.446260, 0.475615, 0.6, 2.473082, 7.338593],
         [-0.552585, -1.2, -1.8, -0.670320, -0.446260, 0.475615, 0.6, 2.473082, 7.338593]),
        ("ce-gppo c=3", recipe(ObjectiveConfig::Gppo(GppoConfig { dual_clip: Some(3.0), ..GppoConfig::ce_gppo() }), None),
         [-0.552585, -1.2, -1.8, -0.670320, -0.446260, 0.475615, 0.6, 2.473082, 6.0],
         [-0.552585, -1.2, -1.8, -0.670320, -0.446260, 0.475615, 0.6, 2.473082, 0.0]),
        ("aspo", recipe(ObjectiveConfig::Aspo(AspoConfig::default()), None),
         [-0.452419, -0.833333, -1.25, -1.491825, 10.2, 0.475615, 0.8, 2.473082, -10.2],
         [-0.452419, 0.0, 0.0, -1.491825, -6.0, 0.475615, 0.0, 2.473082, 6.0]),
        ("dgpo 1,2", recipe(dgpo(1.0, 2.0), None),
         [-0.552585, -1.222821, -2.006970, -0.670320, -0.446260, 0.475615, 0.459849, 2.473082, 7.338593],
         [-0.552585, -1.222821, -2.006970, -0.670320, -0.446260, 0.475615, 0.459849, 2.473082, 7.338593]),
        ("dgpo 2,2", recipe(dgpo(2.0, 2.0), None),
         [-0.552585, -1.222821, -2.006970, -0.670320, -0.446260, 0.475615, 0.348641, 2.473082, 7.338593],
         [-0.552585, -1.222821, -2.006970, -0.670320, -0.446260, 0.475615, 0.348641, 2.473082, 7.338593]),
        ("dgpo 1,1", recipe(dgpo(1.0, 1.0), None),
         [-0.552585, -1.2, -1.8, -0.670320, -0.446260, 0.475615, 0.459849, 2.473082, 7.338593],
         [-0.552585, -1.2, -1.8, -0.670320, -0.446260, 0.475615, 0.459849, 2.473082, 7.338593]),
        ("sapo", recipe(ObjectiveConfig::Sapo(SapoConfig::default()), None),
         [-1.052537, -2.244842, -3.723217, -1.673274, -2.519959, 0.928001, 1.516795, 3.794268, 7.183428],
         [-0.551060, -1.227402, -2.107689, -0.652431, -0.385164, 0.475303, 0.581368, 2.207028, 1.582381]),
    ];
    for (label, cfg, want_loss, want_grad) in &table {
        let (var, inp) = canonical()?;
        let (loss, grad) = loss_and_grad(cfg, &var, &inp)?;
        close(&format!("{label} loss"), &loss, want_loss);
        close(&format!("{label} grad"), &grad, want_grad);
    }
    Ok(())
}

#[test]
fn t1_dgpo_probability_weights_match_ratio_form() {
    // F = W·π: LN (t7) W = C_left·π^n, HP (t2) W = C_right·π^{-1/m}.
    let cfg = DgpoConfig::default();
    let (c_left, _) = cfg.constants(OLD[6].exp());
    let pi = NEW[6].exp();
    close("DGPO LN F", &[c_left * pi.powf(cfg.n) * pi], &[0.459849]);
    let (_, c_right) = cfg.constants(OLD[1].exp());
    let pi = NEW[1].exp();
    close("DGPO HP F", &[c_right * pi.powf(-1.0 / cfg.m) * pi], &[1.222821]);
}

#[test]
fn t1_cispo_absolute_cap() -> R<()> {
    // TRL form: r̂ = min(r, 1.5), no lower bound; g = -r̂A.
    let (var, inp) = canonical()?;
    let cfg = recipe(ObjectiveConfig::Cispo(CispoConfig { eps_low: None, eps_high: 0.2, abs_cap: Some(1.5) }), None);
    let (_, g) = loss_and_grad(&cfg, &var, &inp)?;
    let r: Vec<f64> = NEW.iter().zip(&OLD).map(|(n, o)| (n - o).exp().min(1.5)).collect();
    let want: Vec<f64> = r.iter().zip(&ADV).map(|(r, a)| -r * a).collect();
    close("cispo abs cap", &g, &want);
    assert!((want[8] - 3.0).abs() < 1e-12 && (want[4] + 2.0 * 0.223130).abs() < 1e-6);
    Ok(())
}

#[test]
fn t1_drift_term_alone() -> R<()> {
    let (var, inp) = canonical()?;
    let e = cpgd::drift(&inp, 2.0)?;
    let g = e.sum_all()?.backward()?;
    close(
        "drift",
        &row(&e)?,
        &[-0.094654, -0.118117, -0.786920, 0.230776, 1.320679, 0.060963, 0.550857, -1.297443, -3.4],
    );
    close(
        "drift grad",
        &row(g.get(&var).expect("grad"))?,
        &[0.105171, 0.246077, 0.491825, -0.329680, -0.776870, -0.048771, -0.393469, 0.648721, 2.0],
    );
    Ok(())
}

#[test]
fn t1_regions_and_metrics() -> R<()> {
    let (_, inp) = canonical()?;
    let terms =
        recipe(ObjectiveConfig::PpoClip(PpoClipConfig { dual_clip: Some(3.0), ..PpoClipConfig::default() }), None)
            .objective
            .per_token(&inp)?;
    let u8row = |t: &Tensor| -> R<Vec<u8>> { Ok(t.flatten_all()?.to_vec1::<u8>()?) };
    assert_eq!(u8row(&terms.regions.in_band)?, vec![1, 0, 0, 0, 0, 1, 0, 0, 0]);
    assert_eq!(u8row(&terms.regions.hp)?, vec![0, 1, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(u8row(&terms.regions.lp)?, vec![0, 0, 0, 1, 1, 0, 0, 0, 0]);
    assert_eq!(u8row(&terms.regions.ln)?, vec![0, 0, 0, 0, 0, 0, 1, 0, 0]);
    assert_eq!(u8row(&terms.regions.hn)?, vec![0, 0, 0, 0, 0, 0, 0, 1, 1]);
    assert_eq!(u8row(&terms.regions.dual_clip)?, vec![0, 0, 0, 0, 0, 0, 0, 0, 1]);
    let m = batch_metrics(&inp, &terms.regions)?;
    assert_eq!(m.n_tokens, 9);
    close(
        "clipfrac",
        &[m.clipfrac, m.clipfrac_low, m.clipfrac_high, m.clipfrac_dual],
        &[3.0 / 9.0, 1.0 / 9.0, 2.0 / 9.0, 1.0 / 9.0],
    );
    close("clipfrac objective", &[m.clipfrac_objective], &[4.0 / 9.0]);
    close("ppo_kl", &[m.ppo_kl, m.ppo_kl_k3], &[-0.007778, 0.282478]);
    close("ratio min/max", &[m.ratio_min, m.ratio_max], &[0.223130, 3.669297]);
    // DAPO's wider upper bound moves t2 from HP to M.
    let dapo = Objective::from_name("dapo")?.defaults().objective.per_token(&inp)?;
    assert_eq!(u8row(&dapo.regions.in_band)?, vec![1, 1, 0, 0, 0, 1, 0, 0, 0]);
    // CISPO counts r̂ != r as clipped.
    let cispo =
        ObjectiveConfig::Cispo(CispoConfig { eps_low: Some(0.2), eps_high: 0.2, abs_cap: None }).per_token(&inp)?;
    assert_eq!(u8row(&cispo.regions.clipped)?, vec![0, 1, 1, 1, 1, 0, 1, 1, 1]);
    Ok(())
}

#[test]
fn t0_on_policy_identity_for_every_per_token_objective() -> R<()> {
    let mut checked = 0;
    for obj in OBJECTIVES {
        if obj.kind() == ObjectiveKind::Sequence {
            continue;
        }
        let cfg = LossConfig { ref_kl: None, ..obj.defaults() };
        for a in [1.3, -0.7] {
            let (var, inp) = inputs(&[vec![-1.1, -1.1]], &[vec![-1.1, -1.1]], &[vec![a, a]], &[vec![1.0, 1.0]])?;
            let (loss, grad) = loss_and_grad(&cfg, &var, &inp)?;
            close(&format!("T0 {} A={a}", obj.name), &grad, &[-a, -a]);
            let want = match cfg.objective {
                ObjectiveConfig::Pg(PgConfig { value: PgValue::LogProb }) => -a * -1.1,
                ObjectiveConfig::Pg(PgConfig { value: PgValue::LogRatio }) | ObjectiveConfig::Cpg(_) => 0.0,
                ObjectiveConfig::Cispo(_) => -a * -1.1,
                ObjectiveConfig::Sapo(c) => -2.0 * a / if a > 0.0 { c.tau_pos } else { c.tau_neg },
                _ => -a,
            };
            // The drift term adds min(r-1, c)·logπ = 0 on-policy.
            close(&format!("T0 value {} A={a}", obj.name), &loss, &[want, want]);
        }
        checked += 1;
    }
    assert!(checked >= 26, "T0 ran on {checked} objectives");
    // The reference values: PG/CISPO +1.43 / -0.77, SAPO -2.6 / +1.333333.
    let (_, inp) = inputs(&[vec![-1.1]], &[vec![-1.1]], &[vec![1.3]], &[vec![1.0]])?;
    close("sapo T0", &row(&ObjectiveConfig::Sapo(SapoConfig::default()).per_token(&inp)?.loss)?, &[-2.6]);
    let (_, inp) = inputs(&[vec![-1.1]], &[vec![-1.1]], &[vec![-0.7]], &[vec![1.0]])?;
    close("sapo T0 neg", &row(&ObjectiveConfig::Sapo(SapoConfig::default()).per_token(&inp)?.loss)?, &[1.333333]);
    Ok(())
}

#[test]
fn t2_aggregation_modes() -> R<()> {
    let dev = Device::Cpu;
    let loss = Var::from_tensor(&Tensor::new(&[[1.0f64, 2.0, 3.0, 0.0], [4.0, 5.0, 0.0, 0.0]], &dev)?)?;
    let mask = Tensor::new(&[[1.0f64, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]], &dev)?;
    let cases = [
        (AggMode::TokenMean, 3.0, 0.2, 0.2),
        (AggMode::SeqMeanTokenMean, 3.25, 1.0 / 6.0, 0.25),
        (AggMode::SeqMeanTokenSum, 7.5, 0.5, 0.5),
        (AggMode::SeqMeanTokenSumNorm { l_norm: None }, 3.75, 0.25, 0.25),
        (AggMode::DrGrpo { l_max: 4 }, 1.875, 0.125, 0.125),
    ];
    for (mode, value, wa, wb) in cases {
        let v = aggregate(mode, loss.as_tensor(), &mask, None)?;
        let g = v.backward()?;
        let g = g.get(&loss).expect("grad").to_vec2::<f64>()?;
        close(mode.name(), &[v.to_scalar::<f64>()?], &[value]);
        close(&format!("{} weights", mode.name()), &g.concat(), &[wa, wa, wa, 0.0, wb, wb, 0.0, 0.0]);
    }
    // Group-token-mean vs token-mean with a second prompt of one 1-token response (loss 6).
    let loss3 = Tensor::new(&[[1.0f64, 2.0, 3.0, 0.0], [4.0, 5.0, 0.0, 0.0], [6.0, 0.0, 0.0, 0.0]], &dev)?;
    let mask3 = Tensor::new(&[[1.0f64, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]], &dev)?;
    let groups = [0usize, 0, 1];
    let g = aggregate(AggMode::GroupTokenMean, &loss3, &mask3, Some(&groups))?.to_scalar::<f64>()?;
    let t = aggregate(AggMode::TokenMean, &loss3, &mask3, Some(&groups))?.to_scalar::<f64>()?;
    close("group-token-mean", &[g, t], &[4.5, 3.5]);
    assert!(aggregate(AggMode::GroupTokenMean, &loss3, &mask3, None).is_err(), "group mode needs ids");
    // Verl's sum-norm with an explicit loss_scale_factor.
    let w = weights(AggMode::SeqMeanTokenSumNorm { l_norm: Some(8) }, &mask, None, None)?;
    close("sum-norm L=8", &w.to_vec2::<f64>()?.concat(), &[0.125, 0.125, 0.125, 0.0, 0.125, 0.125, 0.0, 0.0]);
    Ok(())
}

#[test]
fn t3_gspo_sequence_and_token_forms() -> R<()> {
    let rho = [
        vec![0.0003, -0.0001, 0.0004],
        vec![-0.0010, -0.0002, 0.0],
        vec![0.0010, 0.0004, 0.0],
        vec![0.0010, 0.0004, 0.0],
    ];
    let mask = [vec![1.0, 1.0, 1.0], vec![1.0, 1.0, 0.0], vec![1.0, 1.0, 0.0], vec![1.0, 1.0, 0.0]];
    let a = [1.0, -0.5, -2.0, 2.0];
    let adv: Vec<Vec<f64>> = a.iter().zip(&mask).map(|(&a, m)| m.iter().map(|x| x * a).collect()).collect();
    let old: Vec<Vec<f64>> = mask.iter().map(|m| m.iter().map(|_| -1.0).collect()).collect();
    let new: Vec<Vec<f64>> = rho.iter().map(|r| r.iter().map(|x| x - 1.0).collect()).collect();
    let seq_loss = [-1.000200, 0.499850, 2.001400, -2.000800];
    let agg_grad = [-0.083350, 0.0, 0.250175, 0.0];
    let tok_grad = [-1.000200, 0.0, 2.001400, 0.0];
    for name in ["gspo", "gspo-token"] {
        let cfg = Objective::from_name(name)?.defaults();
        let (var, inp) = inputs(&new, &old, &adv, &mask)?;
        let out = cfg.loss(&inp, None)?;
        close(&format!("{name} total"), &[out.total.to_scalar::<f64>()?], &[seq_loss.iter().sum::<f64>() / 4.0]);
        let g = out.total.backward()?;
        let g = g.get(&var).expect("grad").to_vec2::<f64>()?;
        let l = out.terms.loss.to_vec2::<f64>()?;
        for i in 0..4 {
            for t in 0..3 {
                if mask[i][t] == 0.0 {
                    assert_eq!(g[i][t], 0.0, "{name} padding gets no gradient");
                    continue;
                }
                close(&format!("{name} ℓ[{i},{t}]"), &[l[i][t]], &[seq_loss[i]]);
                close(&format!("{name} ∂L[{i},{t}]"), &[g[i][t]], &[agg_grad[i]]);
            }
        }
        if name == "gspo-token" {
            let (var, inp) = inputs(&new, &old, &adv, &mask)?;
            let (_, g) = loss_and_grad(&cfg, &var, &inp)?;
            let mask = &mask;
            let want: Vec<f64> = (0..4).flat_map(|i| (0..3).map(move |t| tok_grad[i] * mask[i][t])).collect();
            close("gspo-token per-token g", &g, &want);
        }
    }
    // Canonical tokens with ε = 0.2.
    let wide = ObjectiveConfig::Gspo(GspoConfig { eps_low: 0.2, eps_high: 0.2 });
    let cfg = LossConfig { objective: wide, ..Objective::from_name("gspo")?.defaults() };
    let (var, inp) = inputs(
        &[NEW[0..3].to_vec(), NEW[5..8].to_vec()],
        &[OLD[0..3].to_vec(), OLD[5..8].to_vec()],
        &[vec![1.0; 3], vec![-1.0; 3]],
        &[vec![1.0; 3], vec![1.0; 3]],
    )?;
    let out = cfg.loss(&inp, None)?;
    let l = out.terms.loss.to_vec2::<f64>()?;
    close("gspo canonical ℓ", &[l[0][0], l[1][0]], &[-1.2, 0.983471]);
    let g = out.total.backward()?;
    let g = g.get(&var).expect("grad").to_vec2::<f64>()?;
    // Per-token g 0.983471 for the second sequence = B·|o|·∂L/∂logπ.
    close("gspo canonical g", &[g[0][0] * 6.0, g[1][0] * 6.0, g[1][2] * 6.0], &[0.0, 0.983471, 0.983471]);
    Ok(())
}

/// GSPO-token where the sequence's mean log-ratio passes verl's clamp (`log s ≤ 10`), against the
/// two peers written out in f64: verl's `compute_policy_loss_gspo` (clamp the token log-ratio
/// `sg(log s) + logπ - sg(logπ)` at 10, so no gradient where it is clamped) and TRL's
/// `gspo_token` (no clamp). Inside the clamp all three agree; above it the value and the zero
/// gradient are verl's, and TRL's differ (its ratio is the unclamped `s`, its gradient `-A·s`).
#[test]
fn gspo_token_clamp_passes_no_gradient_as_in_verl() -> R<()> {
    let (eps_low, eps_high) = (3e-4, 4e-4);
    // Per-token loss and its derivative in logπ_t of one token: `max(-A s, -A clip(s))` at value
    // `s`; `live` says whether ds/dlogπ_t = s (else 0).
    let peer = |log_s: f64, a: f64, clamp_at: Option<f64>| -> (f64, f64) {
        let (log_v, live) = match clamp_at {
            Some(c) if log_s > c => (c, false),
            _ => (log_s, true),
        };
        let s = log_v.exp();
        let (l1, l2) = (-a * s, -a * s.clamp(1.0 - eps_low, 1.0 + eps_high));
        if l1 >= l2 {
            (l1, if live { -a * s } else { 0.0 })
        } else {
            (l2, 0.0) // the clipped branch is constant
        }
    };
    // Row 0 inside the clamp; rows 1 and 2 have mean log-ratio 12 > 10, with A < 0 (the unclipped
    // branch wins) and A > 0 (the clipped branch wins). Row 2 is padded.
    let rho = [vec![0.0002, -0.0001, 0.0005], vec![12.5, 11.5, 12.0], vec![13.0, 11.0, 0.0]];
    let mask = [vec![1.0; 3], vec![1.0; 3], vec![1.0, 1.0, 0.0]];
    let a = [1.0, -0.5, 2.0];
    let adv: Vec<Vec<f64>> = a.iter().zip(&mask).map(|(&a, m)| m.iter().map(|x| x * a).collect()).collect();
    let old: Vec<Vec<f64>> = mask.iter().map(|m| m.iter().map(|_| -20.0).collect()).collect();
    let new: Vec<Vec<f64>> = rho.iter().map(|r| r.iter().map(|x| x - 20.0).collect()).collect();
    let cfg = Objective::from_name("gspo-token")?.defaults();
    let (var, inp) = inputs(&new, &old, &adv, &mask)?;
    let (l, g) = loss_and_grad(&cfg, &var, &inp)?;
    for i in 0..3 {
        let n = mask[i].iter().sum::<f64>();
        let log_s = (0..3).map(|t| rho[i][t] * mask[i][t]).sum::<f64>() / n;
        let verl = peer(log_s, a[i], Some(10.0));
        let trl = peer(log_s, a[i], None);
        for t in (0..3).filter(|&t| mask[i][t] != 0.0) {
            let k = 3 * i + t;
            let scale = verl.0.abs().max(1.0);
            assert!((l[k] - verl.0).abs() <= 1e-9 * scale, "ℓ[{i},{t}] = {}, verl {}", l[k], verl.0);
            assert!((g[k] - verl.1).abs() <= 1e-9 * verl.1.abs().max(1.0), "g[{i},{t}] = {}, verl {}", g[k], verl.1);
            if log_s <= 10.0 {
                assert!((l[k] - trl.0).abs() <= 1e-9 && (g[k] - trl.1).abs() <= 1e-9, "TRL agrees inside the clamp");
            }
        }
    }
    assert_eq!((g[3], g[4], g[5]), (0.0, 0.0, 0.0), "no gradient through the clamped ratio (A < 0)");
    let trl_row1 = peer(12.0, a[1], None);
    assert!(trl_row1.1 != 0.0 && (l[3] - trl_row1.0).abs() > 1.0, "TRL, which does not clamp, differs above it");
    Ok(())
}

#[test]
fn t4_gmpo() -> R<()> {
    let cases = [
        ([0.10, 0.22, 0.40], 1.0, 0.2, -1.181360, [-0.393787, 0.0, 0.0]),
        ([-0.05, -0.50, 0.50], -1.0, 0.2, 1.086904, [0.362301, 0.0, 0.362301]),
        ([0.10, 0.22, 0.35], 1.0, 0.4, -1.250237, [-0.416746, -0.416746, -0.416746]),
    ];
    for (rho, a, eps, want_l, want_g) in cases {
        let cfg = LossConfig {
            objective: ObjectiveConfig::Gmpo(GmpoConfig { log_eps_low: eps, log_eps_high: eps }),
            ..Objective::from_name("gmpo")?.defaults()
        };
        let new: Vec<f64> = rho.iter().map(|r| r - 0.5).collect();
        let (var, inp) = inputs(&[new], &[vec![-0.5; 3]], &[vec![a; 3]], &[vec![1.0; 3]])?;
        let out = cfg.loss(&inp, None)?;
        close("gmpo ℓ", &[out.total.to_scalar::<f64>()?], &[want_l]);
        let g = out.total.backward()?;
        close("gmpo g", &row(g.get(&var).expect("grad"))?, &want_g);
    }
    Ok(())
}

#[test]
fn t5_cpgd_tight_to_loose_schedule() -> R<()> {
    let cfg = recipe(ObjectiveConfig::Cpg(CpgConfig { eps: 0.2, lambda: 0.5, value: CpgValue::LogRatio }), None);
    let (var, inp) = inputs(&[vec![0.13 - 1.0; 4]], &[vec![-1.0; 4]], &[vec![1.0; 4]], &[vec![1.0; 4]])?;
    let (l, g) = loss_and_grad(&cfg, &var, &inp)?;
    close("T5 ℓ", &l, &[-0.117783, -0.13, -0.13, -0.13]);
    close("T5 g", &g, &[0.0, -1.0, -1.0, -1.0]);
    let eps = cpgd::eps_schedule(&inp.mask, 0.2, 0.5)?;
    close("T5 ε_i", &row(&eps)?, &[0.125, 0.15, 0.175, 0.2]);
    Ok(())
}

fn t6_rollout() -> (Vec<f64>, Vec<usize>, Vec<usize>) {
    let rewards = vec![1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
    let groups = vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2];
    (rewards, groups, vec![1; 12])
}

fn outcome(est: Estimator, rewards: &[f64]) -> R<Vec<f64>> {
    let (_, groups, lengths) = t6_rollout();
    let rows = advantage::compute(&est, &Rollout { rewards, groups: &groups, lengths: &lengths, kl: None })?;
    Ok(rows.iter().map(|r| r[0]).collect())
}

#[test]
fn t6_advantage_estimators() -> R<()> {
    let (r01, _, _) = t6_rollout();
    let pm: Vec<f64> = r01.iter().map(|r| 2.0 * r - 1.0).collect();
    let z = [0.0; 4];
    let cat = |a: [f64; 4], b: [f64; 4]| [a.as_slice(), b.as_slice(), z.as_slice()].concat();
    let grpo = Estimator::GroupNorm { eps_std: 1e-6, unbiased: true };
    close(
        "grpo",
        &outcome(grpo, &r01)?,
        &cat([1.499997, -0.499999, -0.499999, -0.499999], [0.499999, 0.499999, -1.499997, 0.499999]),
    );
    let pop = Estimator::GroupNorm { eps_std: 1e-6, unbiased: false };
    let p = outcome(pop, &r01)?;
    close("population std (not default)", &[p[0], p[1], p[6]], &[1.732047, -0.577349, -1.732047]);
    close(
        "dr.grpo",
        &outcome(Estimator::MeanCentred, &r01)?,
        &cat([0.75, -0.25, -0.25, -0.25], [0.25, 0.25, -0.75, 0.25]),
    );
    let loo = Estimator::Loo { kl_coef: 0.0, whitening: None };
    let third = 1.0 / 3.0;
    close("rloo", &outcome(loo, &r01)?, &cat([1.0, -third, -third, -third], [third, third, -1.0, third]));
    close("grpo ±1", &outcome(grpo, &pm)?, &cat([1.499999, -0.5, -0.5, -0.5], [0.5, 0.5, -1.499999, 0.5]));
    close("dr.grpo ±1", &outcome(Estimator::MeanCentred, &pm)?, &cat([1.5, -0.5, -0.5, -0.5], [0.5, 0.5, -1.5, 0.5]));
    let tt = 2.0 / 3.0;
    close("rloo ±1", &outcome(loo, &pm)?, &cat([2.0, -tt, -tt, -tt], [tt, tt, -2.0, tt]));
    let gpg_want = cat([1.125, -0.375, -0.375, -0.375], [0.375, 0.375, -1.125, 0.375]);
    close("gpg", &outcome(Estimator::Gpg { f_norm: GpgNorm::One }, &r01)?, &gpg_want);
    let cfl = Estimator::Cpgd { weight: CpgdWeight::ClipFilterLike { cap: 3.0 } };
    close("cpgd clip-filter-like", &outcome(cfl, &r01)?, &gpg_want);
    let eq = Estimator::Cpgd { weight: CpgdWeight::Equal };
    close("cpgd equal", &outcome(eq, &r01)?, &outcome(Estimator::MeanCentred, &r01)?);
    let std = Estimator::Cpgd { weight: CpgdWeight::Std { eps: 1e-6 } };
    close("cpgd std = grpo", &outcome(std, &r01)?, &outcome(grpo, &r01)?);
    // OPO on g1 with lengths [10, 20, 30, 40].
    let opo = advantage::compute(
        &Estimator::Opo,
        &Rollout { rewards: &[1.0, 0.0, 0.0, 0.0], groups: &[0; 4], lengths: &[10, 20, 30, 40], kl: None },
    )?;
    close("opo", &[opo[0][0], opo[1][0], opo[2][5], opo[3][39]], &[0.9, -0.1, -0.1, -0.1]);
    assert_eq!(opo[3].len(), 40);
    assert!((advantage::frac_zero_std_groups(&r01, &t6_rollout().1) - 1.0 / 3.0).abs() < 1e-12);
    Ok(())
}

#[test]
fn t7_reinforce_pp_and_baseline() -> R<()> {
    let rewards = [1.0, 0.0, 1.0, 1.0];
    let groups = [0, 0, 1, 1];
    let lengths = [2, 3, 1, 2];
    let kl = vec![vec![0.1, -0.2], vec![0.0, 0.3, 0.1], vec![0.2], vec![-0.1, 0.05]];
    let ro = Rollout { rewards: &rewards, groups: &groups, lengths: &lengths, kl: Some(&kl) };
    let biased =
        advantage::compute(&Estimator::ReinforcePP { kl_coef: 0.1, gamma: 1.0, whitening: Whitening::Biased }, &ro)?;
    close(
        "R++ OpenRLHF",
        &biased.concat(),
        &[0.790306, 0.810314, -1.310508, -1.310508, -1.250485, 0.730283, 0.780302, 0.760295],
    );
    let unbiased =
        advantage::compute(&Estimator::ReinforcePP { kl_coef: 0.1, gamma: 1.0, whitening: Whitening::Unbiased }, &ro)?;
    close(
        "R++ verl",
        &unbiased.concat(),
        &[0.739264, 0.757979, -1.225868, -1.225868, -1.169721, 0.683117, 0.729906, 0.711191],
    );
    let base = advantage::compute(&Estimator::ReinforcePPBaseline { whitening: Whitening::Biased }, &ro)?;
    close(
        "R++-baseline",
        &base.concat(),
        &[1.441153, 1.441153, -1.120897, -1.120897, -1.120897, 0.160128, 0.160128, 0.160128],
    );
    // KL shaping without KL data is an error, not a silent zero.
    let no_kl = Rollout { kl: None, ..ro };
    assert!(advantage::compute(
        &Estimator::ReinforcePP { kl_coef: 0.1, gamma: 1.0, whitening: Whitening::Biased },
        &no_kl
    )
    .is_err());
    Ok(())
}

#[test]
fn t8_kl_estimators() -> R<()> {
    let dev = Device::Cpu;
    let x = Var::new(&[[-1.0f64, -0.5, -2.0, -0.7]], &dev)?;
    let reference = Tensor::new(&[[-1.2f64, -0.3, -2.0, -2.7]], &dev)?;
    let cases = [
        (KlEstimator::K1, [0.2, -0.2, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0]),
        (KlEstimator::K2, [0.02, 0.02, 0.0, 2.0], [0.2, -0.2, 0.0, 2.0]),
        (KlEstimator::K3, [0.018731, 0.021403, 0.0, 1.135335], [0.181269, -0.221403, 0.0, 0.864665]),
        (KlEstimator::LowVarK3, [0.018731, 0.021403, 0.0, 1.135335], [0.181269, -0.221403, 0.0, 0.864665]),
        (KlEstimator::K3Plus, [0.018731, 0.021403, 0.0, 1.135335], [0.2, -0.2, 0.0, 2.0]),
    ];
    for (est, want_v, want_g) in cases {
        let k = kl_ref(est, x.as_tensor(), &reference)?;
        let g = k.sum_all()?.backward()?;
        close(est.name(), &row(&k)?, &want_v);
        close(&format!("{} grad", est.name()), &row(g.get(&x).expect("grad"))?, &want_g);
    }
    // Full KL over a vocabulary of 3 against a uniform reference.
    let z = Var::new(&[[2.0f64, 1.0, 0.0]], &dev)?;
    let full = full_kl(z.as_tensor(), &Tensor::zeros((1, 3), DType::F64, &dev)?, 1.0)?;
    close("full KL", &row(&full)?, &[0.266217]);
    let g = full.sum_all()?.backward()?;
    close("∂KL/∂z", &row(g.get(&z).expect("grad"))?, &[0.282587, -0.140770, -0.141817]);
    // Policy-drift k3 on the canonical tokens.
    let (_, inp) = canonical()?;
    close(
        "drift k3",
        &row(&drift_k3(&inp.logp, &inp.logp_old)?)?,
        &[0.005171, 0.026077, 0.091825, 0.070320, 0.723130, 0.001229, 0.106531, 0.148721, 1.369297],
    );
    Ok(())
}

#[test]
fn t9_kl_cov_and_clip_cov() -> R<()> {
    let (_, inp) = canonical()?;
    let cov = rlobjectives::objectives::covariance::centred_cov(&inp.advantages, &inp.logp, &inp.mask)?;
    let cov: Vec<f64> = cov.into_iter().map(|c| c.unwrap_or(f64::NAN)).collect();
    close("cov", &cov, &[0.156852, 0.731852, -0.412037, 0.536296, -0.749259, -0.032593, 0.107407, 1.122407, 0.837407]);
    let (var, inp) = canonical()?;
    let kl = recipe(ObjectiveConfig::KlCov(KlCovConfig { ratio: 2e-4, coef: 0.1 }), None);
    let (l, g) = loss_and_grad(&kl, &var, &inp)?;
    let minus_ra: Vec<f64> = NEW.iter().zip(&OLD).zip(&ADV).map(|((n, o), a)| -(n - o).exp() * a).collect();
    let mut want_l = minus_ra.clone();
    want_l[7] = 2.523082;
    let mut want_g = minus_ra;
    want_g[7] = 2.573082;
    close("kl-cov ℓ", &l, &want_l);
    close("kl-cov g", &g, &want_g);
    let (var, inp) = canonical()?;
    let cc = recipe(ObjectiveConfig::ClipCov(ClipCovConfig::default()), None);
    let (l, g) = loss_and_grad(&cc, &var, &inp)?;
    let ppo_l = [-0.552585, -1.2, -1.8, -0.670320, -0.446260, 0.475615, 0.8, 0.0, 7.338593];
    let ppo_g = [-0.552585, 0.0, 0.0, -0.670320, -0.446260, 0.475615, 0.0, 0.0, 7.338593];
    close("clip-cov ℓ", &l, &ppo_l);
    close("clip-cov g", &g, &ppo_g);
    Ok(())
}

#[test]
fn t10_logits_backprop_and_entropy() -> R<()> {
    let dev = Device::Cpu;
    for (temp, want_lp, want_g) in
        [(1.0, -0.407606, [-0.167380, 0.122364, 0.045015]), (0.7, -0.260118, [-0.163600, 0.131972, 0.031627])]
    {
        let z = Var::new(&[[[2.0f64, 1.0, 0.0]]], &dev)?;
        let y = Tensor::new(&[[0u32]], &dev)?;
        let lp = token_logprobs(z.as_tensor(), &y, temp)?;
        close("logπ_y", &row(&lp)?, &[want_lp]);
        let g = lp.affine(-0.5, 0.0)?.sum_all()?.backward()?;
        close("∂ℓ/∂z", &row(g.get(&z).expect("grad"))?, &want_g);
    }
    let z = Var::new(&[[2.0f64, 1.0, 0.0]], &dev)?;
    let h = token_entropy(z.as_tensor(), 1.0)?;
    close("H", &row(&h)?, &[0.832396]);
    let g = h.sum_all()?.backward()?;
    close("∂H/∂z", &row(g.get(&z).expect("grad"))?, &[-0.282587, 0.140770, 0.141817]);
    let u = token_entropy(&Tensor::zeros((1, 3), DType::F64, &dev)?, 1.0)?;
    close("H uniform", &row(&u)?, &[3f64.ln()]);
    Ok(())
}

// T11 (DAPO's soft overlong punishment) is reward shaping: `rltrain`'s `reward.rs` tests it.
