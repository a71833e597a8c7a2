//! Counts the ops (kernel launches on a GPU) of one decoder layer's forward and backward, with
//! the composite candle ops and with the fused ops (`rlengine::ops`), by walking the autograd
//! graph:
//!
//! ```sh
//! cargo run --release -p rlengine --example op_count
//! ```
//!
//! Forward: the nodes of the layer output's graph that own a new buffer (views, which share their
//! input's buffer, launch nothing; parameters and the layer input are leaves). Backward: the nodes
//! the backward pass adds (candle's `CANDLE_GRAD_DO_NOT_DETACH`, which this example sets, keeps
//! them in the gradients' graphs, and the fused backward kernels join it), counted the same way.
//! The loss `sum(y * w)` adds one op to each count, the zero-initialised gradient buffers candle
//! allocates are not counted.

use candle_core::{DType, Device, Storage, Tensor, Var};
use rlengine::{Arch, Model, ModelConfig, OpPath, PadSide, PaddedBatch, StepInput};
use std::collections::HashSet;

/// The buffer a tensor reads (views share their input's).
fn buffer(t: &Tensor) -> usize {
    let (storage, _) = t.storage_and_layout();
    &*storage as *const Storage as usize
}

/// Nodes of `graphs` not in `skip` that own a buffer no leaf owns.
fn launches<'a>(
    nodes: impl Iterator<Item = &'a Tensor>,
    skip_ids: &HashSet<candle_core::TensorId>,
    leaves: &HashSet<usize>,
) -> usize {
    let mut buffers = HashSet::new();
    for n in nodes {
        if !n.is_variable() && !skip_ids.contains(&n.id()) && !leaves.contains(&buffer(n)) {
            buffers.insert(buffer(n));
        }
    }
    buffers.len()
}

fn count(arch: Arch, path: OpPath) -> Result<(usize, usize), Box<dyn std::error::Error>> {
    let mut config = ModelConfig::tiny(arch, 64);
    config.num_layers = 1;
    let model = Model::random(&config, DType::F32, &Device::Cpu, 1)?;
    let net = model.network()?.with_op_path(path);
    let rows = vec![vec![1u32; 16], vec![2u32; 11]];
    let batch = PaddedBatch::new(&rows, PadSide::Left, 0, &Device::Cpu)?;
    let shared =
        net.layer_inputs(&StepInput { ids: &batch.ids, positions: &batch.positions, key_valid: &batch.valid })?;
    let x = Var::from_tensor(&Tensor::randn(0f32, 1.0, (2, 16, config.hidden_size), &Device::Cpu)?)?;
    let y = net.layer(0, x.as_tensor(), &shared)?;
    let w = Tensor::randn(0f32, 1.0, y.shape(), &Device::Cpu)?;
    let loss = (&y * &w)?.sum_all()?;
    let mut leaves: HashSet<usize> = model.vars().iter().map(|(_, v)| buffer(v.as_tensor())).collect();
    leaves.insert(buffer(x.as_tensor()));
    let none = HashSet::new();
    let forward = launches(y.sorted_nodes().into_iter(), &none, &leaves);
    let loss_graph: HashSet<_> = loss.sorted_nodes().iter().map(|n| n.id()).collect();
    let grads = loss.backward()?;
    let mut grad_nodes = Vec::new();
    let params = model.vars().iter().map(|(_, v)| v.as_tensor().clone()).chain([x.as_tensor().clone()]);
    for p in params {
        if let Some(g) = grads.get(&p) {
            grad_nodes.push(g.clone());
        }
    }
    let all: Vec<&Tensor> = grad_nodes.iter().flat_map(|g| g.sorted_nodes()).collect();
    let mut seen = HashSet::new();
    let unique = all.into_iter().filter(|n| seen.insert(n.id()));
    let mut forward_buffers: HashSet<usize> = loss.sorted_nodes().iter().map(|n| buffer(n)).collect();
    forward_buffers.extend(leaves);
    let backward = launches(unique, &loss_graph, &forward_buffers);
    Ok((forward, backward))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // SAFETY: set before any other thread starts; candle reads it on the first backward pass.
    std::env::set_var("CANDLE_GRAD_DO_NOT_DETACH", "1");
    println!("| layer | ops | forward | backward | total |");
    println!("|---|---|---|---|---|");
    for arch in [Arch::Llama, Arch::Qwen2] {
        for (name, path) in [("composite", OpPath::Composite), ("fused", OpPath::Fused)] {
            let (f, b) = count(arch, path)?;
            println!("| {arch:?} | {name} | {f} | {b} | {} |", f + b);
        }
    }
    Ok(())
}
