// The fused decode step (decode_step.wgsl: its math, bindings and layout) with its working array
// `wm` in a storage buffer instead of workgroup memory, for CPU adapters (SwiftShader, lavapipe).
// WGSL zero-initialises workgroup memory and SwiftShader compiles that initialisation per word:
// the workgroup version of this kernel is the slowest of the page's first pipelines to build
// (1.35 s for 1 544 words, Node + Dawn, `npm run bench -- --only compile`); this one builds in
// 0.51 s. The arithmetic is the same, in the same order: the same bits.
// On a CPU adapter a storage buffer is ordinary memory, as workgroup memory is.
//
// Bindings: 0–7 as decode_step.wgsl
//           8 wm (⌈B/R⌉·WM) f32  scratch: group g's words at g·WM .. (g + 1)·WM (nothing read before written)

const WG: u32 = 64u;

const WM: u32 = 3840u; // f32 words of each group's region, set by the host to the model
const WM_STRIDE: u32 = WM;

@group(0) @binding(8) var<storage, read_write> wm: array<f32>;

/** The group's writes to wm (a storage buffer) visible to all its threads. */
fn wm_sync() { storageBarrier(); }

// @include lib_decode_step
