//! AdamW with decoupled weight decay and bias correction, fused: on CPU (f32, bf16 and f16
//! parameters) one pass over each parameter reads the gradient and updates the moments and the
//! weights in place, in f32 arithmetic, with no temporary tensors (candle's `AdamW` allocates
//! about 14 full-size temporaries per step), spread over rayon's threads in chunks (each element
//! is updated on its own, so the result does not depend on the split). The moments have the
//! parameter's dtype, as in PyTorch. Other devices and dtypes use the same arithmetic through
//! tensor ops.

use std::collections::HashMap;
use std::sync::Mutex;

use candle_core::{CpuStorage, DType, InplaceOp1, Layout, Storage, Tensor, Var};
use half::{bf16, f16};
use rayon::prelude::*;

use crate::error::{Error, Result};

/// Hyper-parameters of [`AdamW`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdamWConfig {
    /// β1.
    pub beta1: f64,
    /// β2.
    pub beta2: f64,
    /// ε added to `sqrt(v̂)`.
    pub eps: f64,
    /// Decoupled weight decay `λ` (`θ ← θ(1 - lr·λ)`), applied to matrices only.
    pub weight_decay: f64,
}

impl Default for AdamWConfig {
    fn default() -> Self {
        Self { beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.0 }
    }
}

/// Moments kept as host vectors, in the parameter's dtype.
#[derive(Debug, Clone)]
enum HostMoments {
    F32 { m: Vec<f32>, v: Vec<f32> },
    BF16 { m: Vec<bf16>, v: Vec<bf16> },
    F16 { m: Vec<f16>, v: Vec<f16> },
}

#[derive(Debug, Clone)]
enum Moments {
    /// Contiguous CPU parameters of a float dtype the fused pass takes: moments as plain
    /// vectors, updated in the fused pass.
    Host(HostMoments),
    /// Anything else: moments as tensors.
    Tensors { m: Tensor, v: Tensor },
}

#[derive(Clone, Copy)]
struct Coefs {
    lr: f32,
    decay: f32,
    b1: f32,
    b2: f32,
    bc1: f32,
    bc2: f32,
    eps: f32,
    scale: f32,
}

/// An element of a parameter, gradient or moment of the fused pass (math in f32).
trait Elem: Copy + Send + Sync + candle_core::WithDType {
    fn f32(self) -> f32;
    fn of(v: f32) -> Self;
}

impl Elem for f32 {
    #[inline(always)]
    fn f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn of(v: f32) -> Self {
        v
    }
}

impl Elem for bf16 {
    #[inline(always)]
    fn f32(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn of(v: f32) -> Self {
        bf16::from_f32(v)
    }
}

impl Elem for f16 {
    #[inline(always)]
    fn f32(self) -> f32 {
        self.to_f32()
    }
    #[inline(always)]
    fn of(v: f32) -> Self {
        f16::from_f32(v)
    }
}

/// Elements per task of the parallel pass.
const CHUNK: usize = 1 << 16;

/// The update of one chunk: parameter `p`, gradient `g` (any float dtype), moments `m`, `v`.
fn update<P: Elem, G: Elem>(p: &mut [P], g: &[G], m: &mut [P], v: &mut [P], c: Coefs) {
    for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
        let g = g.f32() * c.scale;
        let mf = c.b1 * m.f32() + (1.0 - c.b1) * g;
        let vf = c.b2 * v.f32() + (1.0 - c.b2) * g * g;
        *m = P::of(mf);
        *v = P::of(vf);
        let m_hat = mf / c.bc1;
        let v_hat = vf / c.bc2;
        *p = P::of(p.f32() * c.decay - c.lr * m_hat / (v_hat.sqrt() + c.eps));
    }
}

fn update_par<P: Elem, G: Elem>(p: &mut [P], g: &[G], m: &mut [P], v: &mut [P], c: Coefs) -> candle_core::Result<()> {
    if p.len() != g.len() || m.len() != p.len() || v.len() != p.len() {
        candle_core::bail!("fused-adamw: parameter, gradient and moments differ in size")
    }
    p.par_chunks_mut(CHUNK)
        .zip(g.par_chunks(CHUNK))
        .zip(m.par_chunks_mut(CHUNK))
        .zip(v.par_chunks_mut(CHUNK))
        .for_each(|(((p, g), m), v)| update(p, g, m, v, c));
    Ok(())
}

/// A gradient's contiguous CPU elements.
enum Grad<'a> {
    F32(&'a [f32]),
    BF16(&'a [bf16]),
    F16(&'a [f16]),
}

struct FusedStep<'a> {
    grad: Grad<'a>,
    moments: Mutex<&'a mut HostMoments>,
    c: Coefs,
}

impl FusedStep<'_> {
    fn run<P: Elem>(&self, p: &mut [P], m: &mut [P], v: &mut [P]) -> candle_core::Result<()> {
        match self.grad {
            Grad::F32(g) => update_par(p, g, m, v, self.c),
            Grad::BF16(g) => update_par(p, g, m, v, self.c),
            Grad::F16(g) => update_par(p, g, m, v, self.c),
        }
    }
}

impl InplaceOp1 for FusedStep<'_> {
    fn name(&self) -> &'static str {
        "fused-adamw"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle_core::Result<()> {
        let Some((start, end)) = layout.contiguous_offsets() else {
            candle_core::bail!("fused-adamw: parameter is not contiguous")
        };
        let mut moments = self.moments.lock().map_err(|_| candle_core::Error::Msg("fused-adamw: poisoned".into()))?;
        match (storage, &mut **moments) {
            (CpuStorage::F32(data), HostMoments::F32 { m, v }) => self.run(&mut data[start..end], m, v),
            (CpuStorage::BF16(data), HostMoments::BF16 { m, v }) => self.run(&mut data[start..end], m, v),
            (CpuStorage::F16(data), HostMoments::F16 { m, v }) => self.run(&mut data[start..end], m, v),
            _ => candle_core::bail!("fused-adamw: the parameter's dtype changed"),
        }
    }
}

/// Whether `t` takes the fused pass: a contiguous CPU tensor of f32, bf16 or f16.
fn is_host(t: &Tensor) -> bool {
    t.device().is_cpu() && matches!(t.dtype(), DType::F32 | DType::BF16 | DType::F16) && t.is_contiguous()
}

fn host_moments(dtype: DType, n: usize) -> Option<HostMoments> {
    Some(match dtype {
        DType::F32 => HostMoments::F32 { m: vec![0.0; n], v: vec![0.0; n] },
        DType::BF16 => HostMoments::BF16 { m: vec![bf16::ZERO; n], v: vec![bf16::ZERO; n] },
        DType::F16 => HostMoments::F16 { m: vec![f16::ZERO; n], v: vec![f16::ZERO; n] },
        _ => return None,
    })
}

/// The fused AdamW optimiser over a fixed list of named parameters.
#[derive(Debug, Clone)]
pub struct AdamW {
    cfg: AdamWConfig,
    /// Optimizer steps taken (bias correction uses it).
    t: u64,
    names: Vec<String>,
    shapes: Vec<Vec<usize>>,
    moments: Vec<Moments>,
}

impl AdamW {
    /// An optimiser for `vars` with zero moments.
    pub fn new(vars: &[(String, Var)], cfg: AdamWConfig) -> Result<Self> {
        let mut moments = Vec::with_capacity(vars.len());
        for (_, v) in vars {
            let t = v.as_tensor();
            let host = if is_host(t) { host_moments(t.dtype(), t.elem_count()) } else { None };
            moments.push(match host {
                Some(h) => Moments::Host(h),
                None => Moments::Tensors { m: t.zeros_like()?.detach(), v: t.zeros_like()?.detach() },
            });
        }
        Ok(Self {
            cfg,
            t: 0,
            names: vars.iter().map(|(n, _)| n.clone()).collect(),
            shapes: vars.iter().map(|(_, v)| v.dims().to_vec()).collect(),
            moments,
        })
    }

    /// Optimizer steps taken so far.
    pub fn steps(&self) -> u64 {
        self.t
    }

    /// One update: `grads[i]` is the gradient of `vars[i]` (`None`: left untouched), multiplied
    /// by `grad_scale` (the clip factor) on the fly.
    pub fn step(&mut self, vars: &[(String, Var)], grads: &[Option<Tensor>], grad_scale: f64, lr: f64) -> Result<()> {
        if vars.len() != self.moments.len() || grads.len() != vars.len() {
            return Err(Error::InvalidInput(format!(
                "AdamW holds {} parameters, got {} parameters and {} gradients",
                self.moments.len(),
                vars.len(),
                grads.len()
            )));
        }
        self.t += 1;
        let (b1, b2) = (self.cfg.beta1, self.cfg.beta2);
        let bc1 = 1.0 - b1.powi(self.t.min(i32::MAX as u64) as i32);
        let bc2 = 1.0 - b2.powi(self.t.min(i32::MAX as u64) as i32);
        for (((_, var), grad), moments) in vars.iter().zip(grads).zip(self.moments.iter_mut()) {
            let Some(grad) = grad else { continue };
            let decay = if var.rank() >= 2 { 1.0 - lr * self.cfg.weight_decay } else { 1.0 };
            match moments {
                Moments::Host(host) if is_host(var.as_tensor()) => {
                    let grad = match grad.dtype() {
                        DType::F32 | DType::BF16 | DType::F16 => grad.contiguous()?,
                        _ => grad.to_dtype(var.dtype())?.contiguous()?,
                    };
                    let (storage, layout) = grad.storage_and_layout();
                    let (Storage::Cpu(cpu), Some((start, end))) = (&*storage, layout.contiguous_offsets()) else {
                        return Err(Error::InvalidInput(
                            "AdamW: a CPU parameter has a gradient on another device".into(),
                        ));
                    };
                    let grad = match cpu {
                        CpuStorage::F32(g) => Grad::F32(&g[start..end]),
                        CpuStorage::BF16(g) => Grad::BF16(&g[start..end]),
                        CpuStorage::F16(g) => Grad::F16(&g[start..end]),
                        _ => return Err(Error::InvalidInput(format!("AdamW: a {:?} gradient", grad.dtype()))),
                    };
                    let op = FusedStep {
                        grad,
                        moments: Mutex::new(host),
                        c: Coefs {
                            lr: lr as f32,
                            decay: decay as f32,
                            b1: b1 as f32,
                            b2: b2 as f32,
                            bc1: bc1 as f32,
                            bc2: bc2 as f32,
                            eps: self.cfg.eps as f32,
                            scale: grad_scale as f32,
                        },
                    };
                    var.as_tensor().inplace_op1(&op)?;
                }
                Moments::Host(_) => {
                    return Err(Error::InvalidInput(
                        "AdamW: parameter layout changed since the optimiser was built".into(),
                    ));
                }
                Moments::Tensors { m, v } => {
                    let g = grad.to_dtype(var.dtype())?.affine(grad_scale, 0.0)?;
                    *m = ((&*m * b1)? + (&g * (1.0 - b1))?)?.detach();
                    *v = ((&*v * b2)? + (g.sqr()? * (1.0 - b2))?)?.detach();
                    let denom = ((&*v / bc2)?.sqrt()? + self.cfg.eps)?;
                    let update = ((&*m / bc1)? / denom)?;
                    let next = ((var.as_tensor().detach() * decay)? - (update * lr)?)?;
                    var.set(&next)?;
                }
            }
        }
        Ok(())
    }

    /// The moments as named tensors (`exp_avg.NAME`, `exp_avg_sq.NAME`) for a checkpoint.
    pub fn state_tensors(&self) -> Result<HashMap<String, Tensor>> {
        let mut out = HashMap::new();
        for ((name, shape), moments) in self.names.iter().zip(&self.shapes).zip(&self.moments) {
            let (m, v) = match moments {
                Moments::Host(host) => {
                    let dev = &candle_core::Device::Cpu;
                    match host {
                        HostMoments::F32 { m, v } => (
                            Tensor::from_slice(m, shape.as_slice(), dev)?,
                            Tensor::from_slice(v, shape.as_slice(), dev)?,
                        ),
                        HostMoments::BF16 { m, v } => (
                            Tensor::from_slice(m, shape.as_slice(), dev)?,
                            Tensor::from_slice(v, shape.as_slice(), dev)?,
                        ),
                        HostMoments::F16 { m, v } => (
                            Tensor::from_slice(m, shape.as_slice(), dev)?,
                            Tensor::from_slice(v, shape.as_slice(), dev)?,
                        ),
                    }
                }
                Moments::Tensors { m, v } => (m.clone(), v.clone()),
            };
            out.insert(format!("exp_avg.{name}"), m);
            out.insert(format!("exp_avg_sq.{name}"), v);
        }
        Ok(out)
    }

    /// Restores moments saved by [`AdamW::state_tensors`] and the step count.
    pub fn load_state(&mut self, tensors: &HashMap<String, Tensor>, steps: u64) -> Result<()> {
        for ((name, shape), moments) in self.names.iter().zip(&self.shapes).zip(self.moments.iter_mut()) {
            let get = |key: String| -> Result<Tensor> {
                let t = tensors.get(&key).ok_or_else(|| Error::State(format!("no `{key}`")))?;
                if t.dims() != shape.as_slice() {
                    return Err(Error::State(format!("`{key}` has shape {:?}, expected {shape:?}", t.dims())));
                }
                Ok(t.clone())
            };
            let (m, v) = (get(format!("exp_avg.{name}"))?, get(format!("exp_avg_sq.{name}"))?);
            match moments {
                Moments::Host(host) => {
                    let flat = |t: &Tensor, d: DType| t.to_dtype(d).and_then(|t| t.flatten_all());
                    match host {
                        HostMoments::F32 { m: hm, v: hv } => {
                            *hm = flat(&m, DType::F32)?.to_vec1()?;
                            *hv = flat(&v, DType::F32)?.to_vec1()?;
                        }
                        HostMoments::BF16 { m: hm, v: hv } => {
                            *hm = flat(&m, DType::BF16)?.to_vec1()?;
                            *hv = flat(&v, DType::BF16)?.to_vec1()?;
                        }
                        HostMoments::F16 { m: hm, v: hv } => {
                            *hm = flat(&m, DType::F16)?.to_vec1()?;
                            *hv = flat(&v, DType::F16)?.to_vec1()?;
                        }
                    }
                }
                Moments::Tensors { m: tm, v: tv } => {
                    *tm = m.to_device(tm.device())?.to_dtype(tm.dtype())?;
                    *tv = v.to_device(tv.device())?.to_dtype(tv.dtype())?;
                }
            }
        }
        self.t = steps;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use candle_core::Device;

    /// The reference update, element by element in f64.
    fn reference(p: f64, grads: &[f64], lr: f64, c: AdamWConfig, decay_on: bool) -> f64 {
        let (mut p, mut m, mut v) = (p, 0.0, 0.0);
        for (t, g) in grads.iter().enumerate() {
            let t = (t + 1) as i32;
            m = c.beta1 * m + (1.0 - c.beta1) * g;
            v = c.beta2 * v + (1.0 - c.beta2) * g * g;
            let mh = m / (1.0 - c.beta1.powi(t));
            let vh = v / (1.0 - c.beta2.powi(t));
            if decay_on {
                p *= 1.0 - lr * c.weight_decay;
            }
            p -= lr * mh / (vh.sqrt() + c.eps);
        }
        p
    }

    #[test]
    fn fused_and_tensor_paths_match_the_formula() {
        let c = AdamWConfig { beta1: 0.9, beta2: 0.99, eps: 1e-8, weight_decay: 0.1 };
        let lr = 0.01;
        let grads = [[0.5, -1.0, 2.0, 0.0], [0.1, 0.3, -0.2, 1.0], [-0.4, 0.2, 0.0, 0.5]];
        for dtype in [DType::F32, DType::F64] {
            let w = Var::from_tensor(
                &Tensor::new(&[[1.0f64, -2.0], [0.5, 3.0]], &Device::Cpu).unwrap().to_dtype(dtype).unwrap(),
            )
            .unwrap();
            let b = Var::from_tensor(&Tensor::new(&[1.0f64, -1.0], &Device::Cpu).unwrap().to_dtype(dtype).unwrap())
                .unwrap();
            let vars = vec![("w".to_string(), w.clone()), ("b".to_string(), b.clone())];
            let mut opt = AdamW::new(&vars, c).unwrap();
            for g in &grads {
                let gw = Tensor::new(g, &Device::Cpu).unwrap().reshape((2, 2)).unwrap().to_dtype(dtype).unwrap();
                let gb = Tensor::new(&g[..2], &Device::Cpu).unwrap().to_dtype(dtype).unwrap();
                opt.step(&vars, &[Some(gw), Some(gb)], 1.0, lr).unwrap();
            }
            let got: Vec<f64> = w.as_tensor().to_dtype(DType::F64).unwrap().flatten_all().unwrap().to_vec1().unwrap();
            let init = [1.0, -2.0, 0.5, 3.0];
            for i in 0..4 {
                let gi: Vec<f64> = grads.iter().map(|g| g[i]).collect();
                let want = reference(init[i], &gi, lr, c, true);
                assert!((got[i] - want).abs() < 1e-6, "{dtype:?} w[{i}]: {} vs {want}", got[i]);
            }
            let got_b: Vec<f64> = b.as_tensor().to_dtype(DType::F64).unwrap().to_vec1().unwrap();
            let gb0: Vec<f64> = grads.iter().map(|g| g[0]).collect();
            assert!((got_b[0] - reference(1.0, &gb0, lr, c, false)).abs() < 1e-6, "bias is not decayed");
            assert_eq!(opt.steps(), 3);
        }
    }

    #[test]
    fn half_precision_moments_update_in_place_with_f32_math() {
        // The fused bf16/f16 pass: f32 arithmetic per element, parameter and moments rounded to
        // the dtype after each step (the reference rounds the same way), weight decay on matrices.
        let c = AdamWConfig { beta1: 0.9, beta2: 0.99, eps: 1e-8, weight_decay: 0.1 };
        let lr = 0.01f32;
        let grads = [[0.5f32, -1.0, 2.0, 0.0], [0.1, 0.3, -0.2, 1.0], [-0.4, 0.2, 0.0, 0.5]];
        let init = [1.0f32, -2.0, 0.5, 3.0];
        for dtype in [DType::BF16, DType::F16] {
            let round = |x: f32| -> f32 {
                let t = Tensor::new(&[x], &Device::Cpu).unwrap().to_dtype(dtype).unwrap();
                t.to_dtype(DType::F32).unwrap().to_vec1::<f32>().unwrap()[0]
            };
            let w = Var::from_tensor(
                &Tensor::new(&init, &Device::Cpu).unwrap().reshape((2, 2)).unwrap().to_dtype(dtype).unwrap(),
            )
            .unwrap();
            let vars = vec![("w".to_string(), w.clone())];
            let mut opt = AdamW::new(&vars, c).unwrap();
            for g in &grads {
                let gw = Tensor::new(g, &Device::Cpu).unwrap().reshape((2, 2)).unwrap().to_dtype(dtype).unwrap();
                opt.step(&vars, &[Some(gw)], 0.5, f64::from(lr)).unwrap();
            }
            let got: Vec<f32> = w.as_tensor().to_dtype(DType::F32).unwrap().flatten_all().unwrap().to_vec1().unwrap();
            for i in 0..4 {
                let (mut p, mut m, mut v) = (round(init[i]), 0.0f32, 0.0f32);
                for (t, g) in grads.iter().enumerate() {
                    let g = round(g[i]) * 0.5;
                    let t = (t + 1) as i32;
                    let mf = 0.9 * m + 0.1 * g;
                    let vf = 0.99 * v + 0.01 * g * g;
                    let (bc1, bc2) = ((1.0 - 0.9f64.powi(t)) as f32, (1.0 - 0.99f64.powi(t)) as f32);
                    p = round(p * (1.0 - lr * 0.1) - lr * (mf / bc1) / ((vf / bc2).sqrt() + 1e-8));
                    (m, v) = (round(mf), round(vf));
                }
                assert_eq!(got[i], p, "{dtype:?} w[{i}]");
            }
            let state = opt.state_tensors().unwrap();
            assert_eq!(state["exp_avg.w"].dtype(), dtype);
            let mut again = AdamW::new(&vars, c).unwrap();
            again.load_state(&state, opt.steps()).unwrap();
            assert_eq!(
                again.state_tensors().unwrap()["exp_avg_sq.w"].to_dtype(DType::F32).unwrap().to_vec2::<f32>().unwrap(),
                state["exp_avg_sq.w"].to_dtype(DType::F32).unwrap().to_vec2::<f32>().unwrap()
            );
        }
    }

    #[test]
    fn state_round_trip_continues_identically() {
        let c = AdamWConfig::default();
        let mk = || Var::from_tensor(&Tensor::new(&[[1.0f32, 2.0, 3.0]], &Device::Cpu).unwrap()).unwrap();
        let g = Tensor::new(&[[0.3f32, -0.1, 0.7]], &Device::Cpu).unwrap();
        let (a, b) = (mk(), mk());
        let va = vec![("x".to_string(), a.clone())];
        let vb = vec![("x".to_string(), b.clone())];
        let mut oa = AdamW::new(&va, c).unwrap();
        oa.step(&va, &[Some(g.clone())], 0.5, 0.1).unwrap();
        b.set(a.as_tensor()).unwrap();
        let mut ob = AdamW::new(&vb, c).unwrap();
        ob.load_state(&oa.state_tensors().unwrap(), oa.steps()).unwrap();
        oa.step(&va, &[Some(g.clone())], 1.0, 0.1).unwrap();
        ob.step(&vb, &[Some(g)], 1.0, 0.1).unwrap();
        assert_eq!(a.as_tensor().to_vec2::<f32>().unwrap(), b.as_tensor().to_vec2::<f32>().unwrap());
        assert!(ob.load_state(&HashMap::new(), 1).is_err());
    }
}
