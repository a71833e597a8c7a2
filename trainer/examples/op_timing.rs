use candle_core::{Device, Tensor, Var};
use rltrain::aggregate::{aggregate_with, weights, AggMode};
use rltrain::objectives::{LossInputs, Objective};
use std::time::Instant;
fn main() -> rltrain::Result<()> {
    let d = Device::Cpu;
    let a = Tensor::randn(-1f32, 0.3, (256, 4096), &d)?;
    let o = Tensor::randn(-1f32, 0.3, (256, 4096), &d)?;
    let adv = Tensor::randn(0f32, 1., (256, 4096), &d)?;
    let mask = a.ones_like()?;
    let v = Var::from_tensor(&a)?;
    let inp = LossInputs::new(v.as_tensor().clone(), o, adv, mask.clone())?;
    let cfg = Objective::from_name("dgpo")?.defaults();
    for _ in 0..2 {
        let s = Instant::now();
        let p = rltrain::objectives::parts::Prepared::new(&inp)?;
        let t0 = s.elapsed().as_secs_f64() * 1e3;
        let _r = p.ratio_regions(0.2, 0.2)?;
        let t1 = s.elapsed().as_secs_f64() * 1e3;
        let terms = cfg.objective.per_token(&inp)?;
        let t2 = s.elapsed().as_secs_f64() * 1e3;
        let w = weights(AggMode::TokenMean, &mask, None, None)?;
        let t3 = s.elapsed().as_secs_f64() * 1e3;
        let l = aggregate_with(&terms.loss, &w, &mask)?;
        let t4 = s.elapsed().as_secs_f64() * 1e3;
        let _g = l.backward()?;
        let t5 = s.elapsed().as_secs_f64() * 1e3;
        println!("prepare {t0:.0} regions {:.0} kernel {:.0} weights {:.0} agg {:.0} backward {:.0}", t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4);
    }
    Ok(())
}
