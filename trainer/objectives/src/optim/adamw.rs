//! AdamW with decoupled weight decay and bias correction, fused: on CPU (f32) one pass over each
//! parameter reads the gradient and updates the moments and the weights in place, with no
//! temporary tensors (candle's `AdamW` allocates about 14 full-size temporaries per step). Other
//! devices and dtypes use the same arithmetic through tensor ops.

use std::cell::RefCell;
use std::collections::HashMap;

use candle_core::{CpuStorage, DType, InplaceOp1, Layout, Storage, Tensor, Var};

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

#[derive(Debug, Clone)]
enum Moments {
    /// CPU f32 parameters: moments as plain vectors, updated in the fused pass.
    Host { m: Vec<f32>, v: Vec<f32> },
    /// Anything else: moments as tensors.
    Tensors { m: Tensor, v: Tensor },
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

struct FusedStep<'a> {
    grad: &'a [f32],
    m: RefCell<&'a mut [f32]>,
    v: RefCell<&'a mut [f32]>,
    c: Coefs,
}

impl InplaceOp1 for FusedStep<'_> {
    fn name(&self) -> &'static str {
        "fused-adamw"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle_core::Result<()> {
        let CpuStorage::F32(data) = storage else { candle_core::bail!("fused-adamw: parameter is not f32") };
        let Some((start, end)) = layout.contiguous_offsets() else {
            candle_core::bail!("fused-adamw: parameter is not contiguous")
        };
        let p = &mut data[start..end];
        let mut m = self.m.borrow_mut();
        let mut v = self.v.borrow_mut();
        if p.len() != self.grad.len() || m.len() != p.len() || v.len() != p.len() {
            candle_core::bail!("fused-adamw: parameter, gradient and moments differ in size")
        }
        let c = self.c;
        for (((p, &g), m), v) in p.iter_mut().zip(self.grad).zip(m.iter_mut()).zip(v.iter_mut()) {
            let g = g * c.scale;
            *m = c.b1 * *m + (1.0 - c.b1) * g;
            *v = c.b2 * *v + (1.0 - c.b2) * g * g;
            let m_hat = *m / c.bc1;
            let v_hat = *v / c.bc2;
            *p = *p * c.decay - c.lr * m_hat / (v_hat.sqrt() + c.eps);
        }
        Ok(())
    }
}

fn is_host_f32(t: &Tensor) -> bool {
    t.device().is_cpu() && t.dtype() == DType::F32 && t.is_contiguous()
}

impl AdamW {
    /// An optimiser for `vars` with zero moments.
    pub fn new(vars: &[(String, Var)], cfg: AdamWConfig) -> Result<Self> {
        let mut moments = Vec::with_capacity(vars.len());
        for (_, v) in vars {
            let t = v.as_tensor();
            moments.push(if is_host_f32(t) {
                Moments::Host { m: vec![0.0; t.elem_count()], v: vec![0.0; t.elem_count()] }
            } else {
                Moments::Tensors { m: t.zeros_like()?.detach(), v: t.zeros_like()?.detach() }
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
                Moments::Host { m, v } if is_host_f32(var.as_tensor()) => {
                    let grad = if grad.is_contiguous() && grad.dtype() == DType::F32 {
                        grad.clone()
                    } else {
                        grad.to_dtype(DType::F32)?.contiguous()?
                    };
                    let (storage, layout) = grad.storage_and_layout();
                    let (Storage::Cpu(cpu), Some((start, end))) = (&*storage, layout.contiguous_offsets()) else {
                        return Err(Error::InvalidInput(
                            "AdamW: a CPU parameter has a gradient on another device".into(),
                        ));
                    };
                    let g = &cpu.as_slice::<f32>()?[start..end];
                    let op = FusedStep {
                        grad: g,
                        m: RefCell::new(m.as_mut_slice()),
                        v: RefCell::new(v.as_mut_slice()),
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
                Moments::Host { .. } => {
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
                Moments::Host { m, v } => (
                    Tensor::from_slice(m, shape.as_slice(), &candle_core::Device::Cpu)?,
                    Tensor::from_slice(v, shape.as_slice(), &candle_core::Device::Cpu)?,
                ),
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
                Moments::Host { m: hm, v: hv } => {
                    *hm = m.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()?;
                    *hv = v.to_dtype(DType::F32)?.flatten_all()?.to_vec1::<f32>()?;
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
