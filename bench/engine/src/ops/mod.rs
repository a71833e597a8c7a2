//! The network's fused training ops, each with its own forward and backward pass: attention
//! ([`attention`], FlashAttention-2 style), log-probs and entropy straight from hidden states
//! ([`lm_head`]), the linear layers ([`linear`]), RMSNorm ([`rms_norm`]), rotary embedding
//! ([`rotary`]) and SwiGLU ([`swiglu`]).
//!
//! Each op is a candle custom op whose backward is another custom op, so a training step keeps
//! what the op's backward needs and nothing else (the composite ops it replaces keep every
//! intermediate), and one layer is a few large kernels instead of dozens of small ones. Every op
//! has a CPU kernel for f32, bf16 and f16 (f32 arithmetic inside) and, on other devices, a
//! composite of candle ops that bounds memory the same way; a CUDA kernel plugs in as the custom
//! op's `cuda_fwd` behind the same functions. [`OpPath::Composite`] keeps the plain composite
//! ops (the network as it was before these ops), for tests and op counts.
//!
//! What each op keeps alive for the backward pass beyond its inputs (which the graph holds
//! anyway), and its transient peak, in bytes (`e` bytes per element of the inputs' dtype, `B`
//! batch, `T` queries, `S` keys, `H`/`KVH` query/kv heads, `hd` head size, `N` rows, `D` width,
//! `F` intermediate size, `V` vocabulary, `c` rows per log-prob chunk, [`lm_head::chunk_rows`];
//! `P` threads; tiles of 64 rows):
//!
//! | op | kept for the backward | transient peak |
//! |---|---|---|
//! | attention, CPU kernel | output `e·B·T·H·hd` + log-sum-exp `4·B·T·H` | forward: per thread `4·(3·64·hd + 64·64 + 128)`; backward: the gradients `e·(B·H·T·hd + 2·B·KVH·S·hd)` + `e·B·T·H·hd` (contiguous `dO`, where it is not) + per thread `4·(2·S·hd + 5·64·hd + 2·64·64)`; then `e·B·T·H·hd` when `dq` is laid out as `[B, T, H·hd]` |
//! | attention, tiled composite (other devices) | the same | per chunk of `q` queries, about 4 score tensors `4·B·H·q·S` (each at most [`attention::COMPOSITE_SCORE_BYTES`]) + contiguous `k`, `v` `2·e·B·KVH·S·hd`; backward adds f32 `dk`, `dv` accumulators `8·B·KVH·S·hd` |
//! | log-prob + entropy from hidden, CPU kernel | its `[N, 3]` f32 output (with the log-sum-exp), `12·N` | forward `4·(512·4096 + 4096·D)` + `4·N·D` (hidden widened, 16-bit only); backward the same tiles + `4·4096·D` (a head block's f32 gradient) + `4·N·D` (f32 d hidden) + `e·V·D` (the head's gradient) + `e·N·D` (d hidden, 16-bit only) |
//! | log-prob + entropy from hidden, chunked composite (other devices, f64) | its `[N, 2]` output, `8·N` (`16·N` for f64) | forward `c·V·(e + 4)` (f32: `8·c·V`); backward `c·V·(e + 8 + e)` + `3·V·D·e` (the head's gradient summed over chunks) + `N·D·e` (d hidden) |
//! | linear, CPU kernel (training forwards) | nothing (its output is the next op's input) | 16-bit only: the weight widened to f32 `4·out·in` + f32 blocks of at most 16 MiB; backward `d w` in f32 `4·out·in` |
//! | RMSNorm | nothing (its output is the next op's input) | backward `e·(N + 1)·D` + per thread `12·D` |
//! | rotary | nothing (cos/sin `2·e·B·T·hd` are shared by all layers) | backward `e·N·hd` (+ the same for a contiguous copy of a strided gradient) |
//! | SwiGLU | nothing (its inputs are the two projections) | backward `2·e·N·F` |

pub mod attention;
pub(crate) mod gemm;
pub mod linear;
pub mod lm_head;
pub mod rms_norm;
pub mod rotary;
pub mod swiglu;
mod tiles;

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, DType, Layout, Shape, Storage, Tensor, WithDType};
use half::{bf16, f16};

/// Which implementation of attention, norms, rotary embedding, SwiGLU and the log-prob head a
/// [`crate::Network`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OpPath {
    /// The fused ops of this module (the default).
    #[default]
    Fused,
    /// The plain composite candle ops (full `[B, H, T, S]` scores, `[B, T, V]` logits): the
    /// reference the fused ops are tested against, and the "before" of the op counts.
    Composite,
}

/// A float element the CPU kernels read and write (f32, bf16, f16), computing in f32.
pub(crate) trait Elem: WithDType + Copy + Send + Sync {
    fn to_f32(self) -> f32;
    fn from_f32(v: f32) -> Self;
    /// The elements as f32 when they are f32 (no copy).
    fn as_f32(_: &[Self]) -> Option<&[f32]> {
        None
    }
    /// The elements as f32 when they are f32 (no copy).
    fn as_f32_mut(_: &mut [Self]) -> Option<&mut [f32]> {
        None
    }
    /// An f32 vector as a vector of `Self` when `Self` is f32 (no copy), else the vector back.
    fn from_f32_vec(v: Vec<f32>) -> std::result::Result<Vec<Self>, Vec<f32>> {
        Err(v)
    }
}

impl Elem for f32 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        v
    }
    fn as_f32(s: &[Self]) -> Option<&[f32]> {
        Some(s)
    }
    fn as_f32_mut(s: &mut [Self]) -> Option<&mut [f32]> {
        Some(s)
    }
    fn from_f32_vec(v: Vec<f32>) -> std::result::Result<Vec<Self>, Vec<f32>> {
        Ok(v)
    }
}

impl Elem for bf16 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        bf16::from_f32(v)
    }
}

impl Elem for f16 {
    #[inline(always)]
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
    #[inline(always)]
    fn from_f32(v: f32) -> Self {
        f16::from_f32(v)
    }
}

/// Runs `$body` with `$t` bound to the element type of `$dtype` (f32, bf16 or f16); other dtypes
/// are an error naming the op.
macro_rules! with_float {
    ($name:expr, $dtype:expr, |$t:ident| $body:expr) => {
        match $dtype {
            candle_core::DType::F32 => {
                type $t = f32;
                $body
            }
            candle_core::DType::BF16 => {
                type $t = half::bf16;
                $body
            }
            candle_core::DType::F16 => {
                type $t = half::f16;
                $body
            }
            d => candle_core::bail!("{}: f32, bf16 or f16 only, got {d:?}", $name),
        }
    };
}
pub(crate) use with_float;

/// The contiguous elements of a CPU tensor argument.
pub(crate) fn contiguous<'a, T: Elem>(name: &str, s: &'a CpuStorage, l: &Layout) -> candle_core::Result<&'a [T]> {
    match l.contiguous_offsets() {
        Some((a, b)) => Ok(&s.as_slice::<T>()?[a..b]),
        None => candle_core::bail!("{name}: expected a contiguous tensor"),
    }
}

/// Whether the op runs a CPU kernel: CPU tensors of a float dtype the kernels take.
pub(crate) fn cpu_kernel(t: &Tensor) -> bool {
    t.device().is_cpu() && matches!(t.dtype(), DType::F32 | DType::BF16 | DType::F16)
}

/// A tensor computed beforehand (a composite forward run on detached tensors), handed out once
/// as a custom op's forward result so the op's backward is attached to it; the op then lets go
/// of it (the graph keeps the result, not a second copy).
pub(crate) struct Precomputed(std::sync::Mutex<Option<Tensor>>);

impl Precomputed {
    /// Wraps a detached result, copied to a fresh buffer (a storage of its own, from offset 0).
    pub fn new(t: &Tensor) -> candle_core::Result<Self> {
        Ok(Precomputed(std::sync::Mutex::new(Some(t.detach().force_contiguous()?))))
    }

    fn take(&self) -> candle_core::Result<Tensor> {
        let taken = self.0.lock().map(|mut t| t.take()).unwrap_or(None);
        taken.ok_or_else(|| candle_core::Error::Msg("precomputed op result used twice".into()))
    }

    /// The result's CPU storage.
    pub fn cpu(&self) -> candle_core::Result<(CpuStorage, Shape)> {
        let t = self.take()?;
        let (storage, layout) = t.storage_and_layout();
        match &*storage {
            Storage::Cpu(s) => Ok((s.try_clone(layout)?, layout.shape().clone())),
            _ => candle_core::bail!("precomputed result on another device"),
        }
    }

    /// The result's CUDA storage.
    #[cfg(feature = "cuda")]
    pub fn cuda(&self) -> candle_core::Result<(candle_core::CudaStorage, Shape)> {
        let t = self.take()?;
        let (storage, layout) = t.storage_and_layout();
        match &*storage {
            Storage::Cuda(s) => Ok((s.try_clone(layout)?, layout.shape().clone())),
            _ => candle_core::bail!("precomputed result on another device"),
        }
    }
}

/// The `cpu_fwd` (and with the `cuda` feature `cuda_fwd`) of a `CustomOp3` whose result is the
/// [`Precomputed`] field `$field`.
macro_rules! precomputed_forward {
    ($field:ident) => {
        fn cpu_fwd(
            &self,
            _: &candle_core::CpuStorage,
            _: &candle_core::Layout,
            _: &candle_core::CpuStorage,
            _: &candle_core::Layout,
            _: &candle_core::CpuStorage,
            _: &candle_core::Layout,
        ) -> candle_core::Result<(candle_core::CpuStorage, candle_core::Shape)> {
            self.$field.cpu()
        }

        #[cfg(feature = "cuda")]
        fn cuda_fwd(
            &self,
            _: &candle_core::CudaStorage,
            _: &candle_core::Layout,
            _: &candle_core::CudaStorage,
            _: &candle_core::Layout,
            _: &candle_core::CudaStorage,
            _: &candle_core::Layout,
        ) -> candle_core::Result<(candle_core::CudaStorage, candle_core::Shape)> {
            self.$field.cuda()
        }
    };
}
pub(crate) use precomputed_forward;

/// Whether backward ops should be recorded in the graph: candle's `CANDLE_GRAD_DO_NOT_DETACH`
/// (set by graph walkers such as the `op_count` example) keeps the backward pass as a graph;
/// the fused backward kernels then join it, otherwise they are detached (so a gradient never
/// keeps its forward graph alive).
pub(crate) fn record_backward() -> bool {
    static RECORD: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *RECORD.get_or_init(|| std::env::var("CANDLE_GRAD_DO_NOT_DETACH").is_ok_and(|s| !s.is_empty() && s != "0"))
}

/// Runs a backward kernel on `(a, b)`, detached unless [`record_backward`].
pub(crate) fn backward_kernel2<Op: candle_core::CustomOp2 + Send + Sync + 'static>(
    a: &Tensor,
    b: &Tensor,
    op: Op,
) -> candle_core::Result<Tensor> {
    if record_backward() {
        a.apply_op2(b, op)
    } else {
        a.detach().apply_op2_no_bwd(&b.detach(), &op)
    }
}

/// Runs a backward kernel on `(a, b, c)`, detached unless [`record_backward`].
pub(crate) fn backward_kernel<Op: candle_core::CustomOp3 + Send + Sync + 'static>(
    a: &Tensor,
    b: &Tensor,
    c: &Tensor,
    op: Op,
) -> candle_core::Result<Tensor> {
    if record_backward() {
        a.apply_op3(b, c, op)
    } else {
        a.detach().apply_op3_no_bwd(&b.detach(), &c.detach(), &op)
    }
}
