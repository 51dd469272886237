// One KV-cached decode position through the whole lm model in ONE dispatch (the rollout's
// per-token chain before sampling: it used to be embedding + 7 dispatches per block + ln_f + head).
// In decode every sequence row is independent, so one workgroup owns R rows (R = `rows`, ≤ 4) and
// keeps their activations in workgroup memory; barriers separate the steps.
//
// Math (per row b, position p = pos; all f32; the per-op kernels' formulas):
//   x   = wte[clamp(tok)] + wpe[clamp(position)]          tok = sequences[b,p], position = positions[b,p]
//   per block l:
//     h   = LN(x; ln_1)      LN(x) = (x − μ)·r·γ + β, μ = Σx/D, r = 1/sqrt(Σ(x − μ)²/D + eps)
//     qkv = h·W_attn + b_attn                              (3D) = q | k | v
//     kv[l].k[b,p] = k, kv[l].v[b,p] = v                   (cache write, straight from the dense layer)
//     per head: s_j = q·k_j/√Dh over j ≤ p with mask[b,j] = 1; P = softmax(s) (max-subtracted);
//               att = Σ_j P_j v_j (k_p, v_p read back from the cache); no visible key → att = 0
//     mid = x + att·W_proj + b_proj                        (in place of x: x is not read again)
//     h   = LN(mid; ln_2);  fc = gelu(h·W_fc + b_fc)       (tanh approximation, matmul.wgsl's gelu)
//     x   = mid + fc·W_mlp + b_mlp                          (in place)
//   logits[b,:] = LN(x; ln_f)·wteᵀ                          (tied head)
//   Every dense layer starts from the bias and adds the products k = 0, 1, … in order (product,
//   then add); LayerNorm statistics are two passes in order (as layernorm_rows.wgsl).
// Reference: src/reference/seq/decode.ts (decodeStepRef, composed of the per-op references).
//
// Bindings: 0 uniform U (below)
//           1 params    (N)                    f32  the model's flat parameters (offsets in U)
//           2 kv        (2·nLayer·kv_stride)   f32  layer l's k cache (B, Smax, D) at 2l·kv_stride, v at (2l+1)·kv_stride
//           3 sequences (B, Smax)              i32
//           4 positions (B, Smax)              i32
//           5 mask      (B, Smax)              f32  1 = real token
//           6 logits    (B, V)                 f32  out
//           7 params4   (N/4)                  vec4f the same buffer as binding 1, read 4 columns at a time
//           8 wm        (⌈B/R⌉·WM)             f32  decode_step_scratch only: each group's WM words
// Layout: one workgroup of WG threads per R consecutive rows (grid ⌈B/R⌉; the last group may hold
//   fewer). One array `wm` (below; decode_step_scratch.wgsl puts it in a storage buffer) holds,
//   for the group's rows, the residual x (mid overwrites it), the LayerNorm output h (the
//   attention output `att` reuses it once q is made), q, the attention scores (the MLP's hidden
//   fc reuses q's and the scores' words) and the rows' LayerNorm statistics; k and v go from the
//   dense layer straight to the caches, where the attention reads them after a storage barrier. The host picks R ≤ 4 and sizes
//   WM = R·(2D + max(D + H·Smax, 4D) + 2) to the model: workgroup memory is zero-initialised, and
//   SwiftShader compiles that per word (a fixed 3840-word wm cost ~3 s to build, the most of any
//   kernel), hence the scratch-buffer version for CPU adapters.
//   Dense layers: thread t owns 4 adjacent output columns of all R rows, one vec4 of weights per
//   k shared by the rows (a CPU adapter pays per load: 4 + R loads for 4R products instead of 5
//   for 4 with a workgroup per row). The head: thread t owns 4 vocabulary entries of all R rows.
//   LayerNorm: one thread per row computes (μ, r) into wm, then all normalise.
//   Block l's offsets are block 0's + l·layer_stride (the flat layout repeats per block).
// Limits (checked on the host): D ≤ 256 and a multiple of 4, every offset a multiple of 4,
//   H·Smax ≤ 1024, D/H ≤ 64.

// The body is lib_decode_step.wgsl.

const WG: u32 = 64u;

const WM: u32 = 3840u; // f32 words of workgroup memory, set by the host to the model (≤ 3840: 15 KiB, under WebGPU's 16 KiB minimum)
const WM_STRIDE: u32 = 0u; // every group's wm starts at word 0 of its own workgroup memory

var<workgroup> wm: array<f32, WM>;

fn wm_sync() { workgroupBarrier(); }

// @include lib_decode_step
