//! The fused training ops (`rlengine::ops`) against the composite candle ops they replace:
//! values and gradients of every input, random inputs, f32 and bf16, padding on both sides,
//! lengths that are not a multiple of the kernels' blocks, cached keys, grouped heads, a query
//! that sees no key; and one training forward + backward of a tiny model, fused vs composite.

use candle_core::{DType, Device, Tensor, Var};
use rlengine::ops::attention::{attention, attention_in_chunks, attention_reference, KeyMask};
use rlengine::ops::linear::{linear, linear_reference};
use rlengine::ops::{lm_head, rms_norm::rms_norm, rotary, swiglu::swiglu, OpPath};
use rlengine::{logprob, Arch, Model, ModelConfig, PadSide, PaddedBatch, Rng, StepInput};

/// Random normal tensor (seeded), in `dtype`.
fn randn(shape: &[usize], seed: u64, scale: f64, dtype: DType) -> Tensor {
    let mut rng = Rng::new(seed);
    let n: usize = shape.iter().product();
    let data: Vec<f32> = (0..n).map(|_| (rng.normal() * scale) as f32).collect();
    Tensor::from_vec(data, shape, &Device::Cpu).unwrap().to_dtype(dtype).unwrap()
}

fn to_f32(t: &Tensor) -> Vec<f32> {
    t.to_dtype(DType::F32).unwrap().flatten_all().unwrap().to_vec1().unwrap()
}

/// `max |a - b| <= tol * max |b|` (and `b` not all zero, so the check cannot pass vacuously).
fn assert_close(what: &str, a: &Tensor, b: &Tensor, tol: f32) {
    assert_eq!(a.dims(), b.dims(), "{what}: shapes");
    let (a, b) = (to_f32(a), to_f32(b));
    let scale = b.iter().fold(0f32, |m, x| m.max(x.abs()));
    let diff = a.iter().zip(&b).fold(0f32, |m, (x, y)| m.max((x - y).abs()));
    assert!(scale > 0.0 && a.iter().all(|x| x.is_finite()), "{what}: degenerate values (scale {scale})");
    assert!(diff <= tol * scale, "{what}: max diff {diff} > {tol} x {scale}");
}

/// Output of `f` on `inputs` (as variables) and the gradient of `sum(output * weights)` for every
/// input.
fn value_and_grads(inputs: &[Tensor], weights: &Tensor, f: impl Fn(&[Tensor]) -> Tensor) -> (Tensor, Vec<Tensor>) {
    let vars: Vec<Var> = inputs.iter().map(|t| Var::from_tensor(t).unwrap()).collect();
    let tensors: Vec<Tensor> = vars.iter().map(|v| v.as_tensor().clone()).collect();
    let out = f(&tensors);
    let loss = (out.to_dtype(DType::F32).unwrap() * weights).unwrap().sum_all().unwrap();
    let grads = loss.backward().unwrap();
    let g = tensors.iter().map(|t| grads.get(t).expect("every input gets a gradient").clone()).collect();
    (out, g)
}

fn tolerance(dtype: DType) -> f32 {
    if dtype == DType::F32 {
        1e-5
    } else {
        2e-2
    }
}

/// An attention case: `b` rows, `h` query heads over `kvh` kv heads, `t` queries after `offset`
/// cached keys; row 0 left-padded by `pad` keys, the last row right-padded by `pad` keys.
struct AttentionCase {
    b: usize,
    h: usize,
    kvh: usize,
    t: usize,
    offset: usize,
    hd: usize,
    pad: usize,
}

impl AttentionCase {
    fn mask(&self) -> (KeyMask, Vec<Vec<bool>>) {
        let s = self.offset + self.t;
        let valid: Vec<Vec<bool>> = (0..self.b)
            .map(|r| {
                (0..s).map(|j| !((r == 0 && j < self.pad) || (r == self.b - 1 && r > 0 && j >= s - self.pad))).collect()
            })
            .collect();
        (KeyMask::new(&valid, self.offset).unwrap(), valid)
    }

    /// Loss weights `[B, T, H·hd]`, zero on queries that see no key (there the reference attends
    /// uniformly and the fused op gives zeros: both are padding, never read).
    fn weights(&self, valid: &[Vec<bool>], seed: u64) -> Tensor {
        let w = to_f32(&randn(&[self.b, self.t, self.h * self.hd], seed, 1.0, DType::F32));
        let row = self.h * self.hd;
        let w: Vec<f32> = w
            .chunks(row)
            .enumerate()
            .flat_map(|(r, chunk)| {
                let (b, i) = (r / self.t, r % self.t);
                let sees = (0..=self.offset + i).any(|j| valid[b][j]);
                chunk.iter().map(move |&x| if sees { x } else { 0.0 })
            })
            .collect();
        Tensor::from_vec(w, (self.b, self.t, row), &Device::Cpu).unwrap()
    }

    fn inputs(&self, dtype: DType, seed: u64) -> Vec<Tensor> {
        let s = self.offset + self.t;
        vec![
            randn(&[self.b, self.h, self.t, self.hd], seed, 1.0, dtype),
            randn(&[self.b, self.kvh, s, self.hd], seed + 1, 1.0, dtype),
            randn(&[self.b, self.kvh, s, self.hd], seed + 2, 1.0, dtype),
        ]
    }
}

fn attention_cases() -> Vec<AttentionCase> {
    vec![
        // T = 70: one full and one partial block of 64; 2 query heads per kv head; the left-padded
        // row's first 5 queries see no key.
        AttentionCase { b: 2, h: 4, kvh: 2, t: 70, offset: 0, hd: 16, pad: 5 },
        // Cached keys (S = 83 > T = 13), no grouping, three rows.
        AttentionCase { b: 3, h: 3, kvh: 3, t: 13, offset: 70, hd: 8, pad: 7 },
        // Head size 64, 4 query heads on one kv head, over two key blocks.
        AttentionCase { b: 1, h: 4, kvh: 1, t: 130, offset: 0, hd: 64, pad: 0 },
    ]
}

#[test]
fn attention_kernel_and_tiled_composite_match_the_composite_ops() {
    for dtype in [DType::F32, DType::BF16] {
        for (n, case) in attention_cases().iter().enumerate() {
            let (mask, valid) = case.mask();
            let weights = case.weights(&valid, 100 + n as u64);
            let inputs = case.inputs(dtype, 10 * n as u64);
            let (want, want_grads) =
                value_and_grads(&inputs, &weights, |x| attention_reference(&x[0], &x[1], &x[2], &mask).unwrap());
            let rows_seen = Tensor::from_vec(
                to_f32(&weights).iter().map(|&w| if w == 0.0 { 0.0 } else { 1.0 }).collect::<Vec<f32>>(),
                weights.shape(),
                &Device::Cpu,
            )
            .unwrap();
            let seen = |t: &Tensor| (t.to_dtype(DType::F32).unwrap() * &rows_seen).unwrap();
            let kernel = value_and_grads(&inputs, &weights, |x| attention(&x[0], &x[1], &x[2], &mask).unwrap());
            let tiled =
                value_and_grads(&inputs, &weights, |x| attention_in_chunks(&x[0], &x[1], &x[2], &mask, 16).unwrap());
            for (path, (got, grads)) in [("kernel", kernel), ("tiled", tiled)] {
                let what = format!("{path} {dtype:?} case {n}");
                assert_close(&format!("{what}: output"), &seen(&got), &seen(&want), tolerance(dtype));
                // Queries that see no key: zeros, not NaN.
                let out = to_f32(&got);
                let unseen = to_f32(&rows_seen);
                assert!(out.iter().zip(&unseen).all(|(o, s)| *s == 1.0 || *o == 0.0), "{what}: unseen rows not zero");
                for (name, (g, w)) in ["dq", "dk", "dv"].iter().zip(grads.iter().zip(&want_grads)) {
                    assert_close(&format!("{what}: {name}"), g, w, tolerance(dtype));
                }
            }
        }
    }
}

#[test]
fn attention_rejects_inputs_that_do_not_fit() {
    let case = AttentionCase { b: 2, h: 4, kvh: 2, t: 6, offset: 0, hd: 8, pad: 1 };
    let (mask, _) = case.mask();
    let x = case.inputs(DType::F32, 1);
    assert!(attention(&x[0], &x[1], &x[1].narrow(3, 0, 4).unwrap(), &mask).is_err(), "v of another head size");
    assert!(attention(&x[0], &x[1], &x[2].to_dtype(DType::BF16).unwrap(), &mask).is_err(), "mixed dtypes");
    let three_kv = randn(&[2, 3, 6, 8], 3, 1.0, DType::F32);
    assert!(attention(&x[0], &three_kv, &three_kv, &mask).is_err(), "4 heads over 3 kv heads");
    let (cached, _) = AttentionCase { offset: 2, ..case }.mask();
    assert!(attention(&x[0], &x[1], &x[2], &cached).is_err(), "mask for other lengths");
    assert!(KeyMask::new(&[vec![true; 3], vec![true; 4]], 0).is_err(), "ragged mask");
}

#[test]
fn rms_norm_equals_the_composite_bit_for_bit_in_f32_and_its_gradients() {
    for dtype in [DType::F32, DType::BF16] {
        for (shape, seed) in [(vec![3, 5, 96], 1u64), (vec![7, 40], 2), (vec![2, 576], 3)] {
            let d = *shape.last().unwrap();
            let inputs = vec![
                randn(&shape, seed, 2.0, dtype),
                (randn(&[d], seed + 1, 0.2, DType::F32) + 1.0).unwrap().to_dtype(dtype).unwrap(),
            ];
            let weights = randn(&shape, seed + 2, 1.0, DType::F32);
            let (want, want_grads) =
                value_and_grads(&inputs, &weights, |x| candle_nn::ops::rms_norm_slow(&x[0], &x[1], 1e-6).unwrap());
            let (got, grads) = value_and_grads(&inputs, &weights, |x| rms_norm(&x[0], &x[1], 1e-6).unwrap());
            assert_eq!(to_f32(&got), to_f32(&want), "{dtype:?} {shape:?}: forward differs from rms_norm_slow");
            for (name, (g, w)) in ["dx", "dw"].iter().zip(grads.iter().zip(&want_grads)) {
                assert_close(&format!("{dtype:?} {shape:?} {name}"), g, w, tolerance(dtype) * 10.0);
            }
        }
    }
}

/// cos/sin tables `[B, T, hd]` of random positions.
fn rotary_tables(b: usize, t: usize, hd: usize, dtype: DType) -> (Tensor, Tensor) {
    let half = hd / 2;
    let angles: Vec<f32> = (0..b * t * hd)
        .map(|i| {
            let (p, d) = (i / hd, i % hd % half);
            (p as f32 * 1.7 + 3.0) / 10000f32.powf(d as f32 / half as f32)
        })
        .collect();
    let a = Tensor::from_vec(angles, (b, t, hd), &Device::Cpu).unwrap();
    (a.cos().unwrap().to_dtype(dtype).unwrap(), a.sin().unwrap().to_dtype(dtype).unwrap())
}

#[test]
fn rotary_equals_the_composite_and_its_gradient() {
    for dtype in [DType::F32, DType::BF16] {
        let (b, t, n, hd) = (2, 9, 3, 16);
        let (cos, sin) = rotary_tables(b, t, hd, dtype);
        let inputs = vec![randn(&[b, t, n, hd], 5, 1.0, dtype)];
        let weights = randn(&[b, t, n, hd], 6, 1.0, DType::F32);
        let (want, want_grads) =
            value_and_grads(&inputs, &weights, |x| rotary::rotary_reference(&x[0], &cos, &sin).unwrap());
        let (got, grads) = value_and_grads(&inputs, &weights, |x| rotary::rotary(&x[0], &cos, &sin).unwrap());
        if dtype == DType::F32 {
            assert_eq!(to_f32(&got), to_f32(&want), "f32 forward differs from the composite");
        }
        assert_close(&format!("{dtype:?} rotary"), &got, &want, tolerance(dtype));
        assert_close(&format!("{dtype:?} rotary dx"), &grads[0], &want_grads[0], tolerance(dtype));
    }
    let x = randn(&[1, 2, 1, 6], 1, 1.0, DType::F32);
    let (cos, sin) = rotary_tables(1, 3, 6, DType::F32);
    assert!(rotary::rotary(&x, &cos, &sin).is_err(), "tables for another length");
}

#[test]
fn linear_equals_the_composite_and_its_gradients() {
    // Shapes that are not multiples of the gemm's tiles; with and without bias; a bf16 case with
    // more rows than one widened block holds is covered by the network test's long rows.
    for dtype in [DType::F32, DType::BF16] {
        for (b, t, inn, out, bias) in [(2, 7, 24, 40, false), (3, 5, 33, 17, true), (1, 1, 8, 3, false)] {
            let x = randn(&[b, t, inn], 1, 1.0, dtype);
            let w = randn(&[out, inn], 2, 0.3, dtype);
            let bv = randn(&[out], 3, 0.5, dtype);
            let weights = randn(&[b, t, out], 4, 1.0, DType::F32);
            let run = |f: fn(&Tensor, &Tensor, Option<&Tensor>) -> rlengine::Result<Tensor>| {
                let inputs = if bias { vec![x.clone(), w.clone(), bv.clone()] } else { vec![x.clone(), w.clone()] };
                value_and_grads(&inputs, &weights, |v| f(&v[0], &v[1], v.get(2)).unwrap())
            };
            let (fused, fused_grads) = run(linear);
            let (reference, reference_grads) = run(linear_reference);
            let what = format!("linear {dtype:?} {b}x{t}x{inn}->{out}");
            assert_close(&what, &fused, &reference, tolerance(dtype));
            for (i, (f, r)) in fused_grads.iter().zip(&reference_grads).enumerate() {
                assert_close(&format!("{what} d input {i}"), f, r, tolerance(dtype));
            }
        }
    }
}

#[test]
fn swiglu_equals_the_composite_and_its_gradients() {
    for dtype in [DType::F32, DType::BF16] {
        let shape = [3, 7, 50];
        let inputs = vec![randn(&shape, 7, 3.0, dtype), randn(&shape, 8, 1.0, dtype)];
        let weights = randn(&shape, 9, 1.0, DType::F32);
        let (want, want_grads) = value_and_grads(&inputs, &weights, |x| (x[0].silu().unwrap() * &x[1]).unwrap());
        let (got, grads) = value_and_grads(&inputs, &weights, |x| swiglu(&x[0], &x[1]).unwrap());
        if dtype == DType::F32 {
            assert_eq!(to_f32(&got), to_f32(&want), "f32 forward differs from the composite");
        }
        assert_close(&format!("{dtype:?} swiglu"), &got, &want, tolerance(dtype));
        for (name, (g, w)) in ["d gate", "d up"].iter().zip(grads.iter().zip(&want_grads)) {
            assert_close(&format!("{dtype:?} swiglu {name}"), g, w, tolerance(dtype));
        }
    }
    let a = randn(&[2, 3], 1, 1.0, DType::F32);
    assert!(swiglu(&a, &a.t().unwrap()).is_err(), "shapes differ");
}

#[test]
fn chunked_lm_head_log_probs_equal_full_logits_and_their_gradients() {
    for dtype in [DType::F32, DType::BF16] {
        let (n, d, v) = (37, 24, 301);
        let inputs = vec![randn(&[n, d], 11, 1.0, dtype), randn(&[v, d], 12, 0.5, dtype)];
        let targets: Vec<u32> = (0..n).map(|i| (i * 97 % v) as u32).collect();
        let targets = Tensor::new(targets.as_slice(), &Device::Cpu).unwrap();
        let weights = randn(&[n, 2], 13, 1.0, DType::F32);
        let stacked = |(lp, h): (Tensor, Tensor)| Tensor::stack(&[lp, h], 1).unwrap();
        let (want, want_grads) = value_and_grads(&inputs, &weights, |x| {
            let logits = x[0].matmul(&x[1].t().unwrap()).unwrap().to_dtype(DType::F32).unwrap();
            stacked(logprob::token_logprob_entropy(&logits, &targets, 0.8).unwrap())
        });
        for chunk in [5, 37, 100] {
            let (got, grads) = value_and_grads(&inputs, &weights, |x| {
                stacked(lm_head::logprob_entropy_chunked(&x[0], &x[1], &targets, 0.8, chunk).unwrap())
            });
            let what = format!("{dtype:?} chunk {chunk}");
            assert_close(&format!("{what}: log-probs and entropies"), &got, &want, tolerance(dtype));
            assert_close(&format!("{what}: d hidden"), &grads[0], &want_grads[0], tolerance(dtype));
            assert_close(&format!("{what}: d head"), &grads[1], &want_grads[1], tolerance(dtype));
        }
        // The CPU kernel: tiles of `rows` x `vocab` (a partial last tile each way, one tile, a
        // head block larger than the vocabulary), with the online softmax across head blocks.
        for (rows, vocab) in [(5, 64), (37, 301), (16, 1000), (1, 7)] {
            let (got, grads) = value_and_grads(&inputs, &weights, |x| {
                stacked(lm_head::logprob_entropy_tiled(&x[0], &x[1], &targets, 0.8, rows, vocab).unwrap())
            });
            let what = format!("{dtype:?} tiles {rows}x{vocab}");
            assert_close(&format!("{what}: log-probs and entropies"), &got, &want, tolerance(dtype));
            assert_close(&format!("{what}: d hidden"), &grads[0], &want_grads[0], tolerance(dtype));
            assert_close(&format!("{what}: d head"), &grads[1], &want_grads[1], tolerance(dtype));
        }
    }
    let h = randn(&[2, 4], 1, 1.0, DType::F32);
    let w = randn(&[5, 4], 2, 1.0, DType::F32);
    assert!(lm_head::logprob_entropy(&h, &w, &Tensor::new(&[0u32, 5], &Device::Cpu).unwrap(), 1.0).is_err());
    assert!(lm_head::logprob_entropy(&h, &w, &Tensor::new(&[0u32], &Device::Cpu).unwrap(), 1.0).is_err());
    assert!(lm_head::logprob_entropy(&h, &w, &Tensor::new(&[0u32, 1], &Device::Cpu).unwrap(), 0.0).is_err());
}

#[test]
fn a_training_step_of_the_fused_network_matches_the_composite_network() {
    for arch in [Arch::Llama, Arch::Qwen2] {
        let mut config = ModelConfig::tiny(arch, 97);
        config.num_layers = 2;
        let model = Model::random(&config, DType::F32, &Device::Cpu, 5).unwrap();
        let rows: Vec<Vec<u32>> = vec![
            vec![
                3, 14, 15, 92, 65, 35, 89, 79, 32, 38, 46, 26, 43, 38, 32, 79, 50, 28, 84, 19, 71, 69, 39, 93, 75, 10,
                58, 20, 9, 74, 94, 45, 92, 30, 78, 16, 40, 62, 86, 20, 89, 98, 62, 80, 34, 82, 53, 42, 11, 70, 67, 9,
                82, 14, 80, 86, 51, 32, 82, 30, 66, 47, 9, 38, 44, 60, 95, 50, 58, 22,
            ],
            vec![2, 71, 82, 81],
            vec![1, 41, 42, 13, 56, 23, 73, 9],
        ];
        let rows: Vec<Vec<u32>> = rows.into_iter().map(|r| r.into_iter().map(|t| t % 97).collect()).collect();
        let run = |path: OpPath, side: PadSide| {
            let net = model.network().unwrap().with_op_path(path);
            let batch = PaddedBatch::new(&rows, side, 0, &Device::Cpu).unwrap();
            let input = StepInput { ids: &batch.ids, positions: &batch.positions, key_valid: &batch.valid };
            let hidden = net.hidden_states(&input, None).unwrap();
            let (b, t) = batch.ids.dims2().unwrap();
            let targets: Vec<u32> = batch.host_ids.iter().flat_map(|r| r[1..].iter().copied().chain([0])).collect();
            let targets = Tensor::from_vec(targets, (b, t), &Device::Cpu).unwrap();
            let (lp, h) = net.target_logprobs(&hidden, &targets, 0.9).unwrap();
            let mask: Vec<f32> = batch
                .valid
                .iter()
                .flat_map(|r| r.windows(2).map(|w| f32::from(u8::from(w[0] && w[1]))).chain([0.0]))
                .collect();
            let mask = Tensor::from_vec(mask, (b, t), &Device::Cpu).unwrap();
            let loss = ((lp + (h * 0.1).unwrap()).unwrap() * &mask).unwrap().sum_all().unwrap();
            (loss.to_scalar::<f32>().unwrap(), loss.backward().unwrap())
        };
        for side in [PadSide::Left, PadSide::Right] {
            let (fused_loss, fused) = run(OpPath::Fused, side);
            let (plain_loss, plain) = run(OpPath::Composite, side);
            assert!(
                (fused_loss - plain_loss).abs() <= 1e-5 * plain_loss.abs(),
                "{arch:?}: loss {fused_loss} vs {plain_loss}"
            );
            for (name, var) in model.vars() {
                let (a, b) = (fused.get(var).expect("fused gradient"), plain.get(var).expect("composite gradient"));
                assert_close(&format!("{arch:?} {side:?} {name}"), a, b, 1e-4);
            }
        }
    }
}
