// Dense-layer ops and the optimiser on the float64 reference backend: thin wrappers over
// src/reference/nn/ that add the interface's accumulate-into-parameter-gradient semantics.
import type { AdamWParams, NnOps } from '../nnOps.ts';
import { expectDType, expectShape, type Tensor } from '../tensor.ts';
import { matmulBackwardRef, matmulRef } from '../../reference/nn/matmul.ts';
import { layerNormBackwardRef, layerNormRef } from '../../reference/nn/layernorm.ts';
import { geluBackwardRef, geluRef } from '../../reference/nn/gelu.ts';
import { embeddingBackwardRef, embeddingRef } from '../../reference/nn/embedding.ts';
import { gatherRowsRef, sliceSeqBackwardRef, sliceSeqRef } from '../../reference/nn/slice.ts';
import { adamwRef, gradNormRef } from '../../reference/nn/optim.ts';
import { checkSlice, embeddingWindowDims, matmulDims, rowsCols, seqDims } from '../nnArgs.ts';
import { cpu, CpuTensor } from './cpuTensor.ts';

function addInto(dst: Tensor, src: Float64Array): void {
  const d = cpu(dst).data;
  for (let i = 0; i < src.length; i++) d[i] += src[i];
}

function expectSize(name: string, t: Tensor, size: number): void {
  if (t.size !== size) throw new Error(`${name}: expected ${size} elements, got ${t.size}`);
}

export class CpuNnOps implements NnOps {
  matmul(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean): Tensor {
    const { M, K, N, outShape } = matmulDims(a, b, bias, transB);
    return new CpuTensor(matmulRef(cpu(a).data, cpu(b).data, bias ? cpu(bias).data : null, M, K, N, transB), outShape, 'f32');
  }

  matmulGelu(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean): { pre: Tensor; act: Tensor } {
    const { M, K, N, outShape } = matmulDims(a, b, bias, transB);
    const pre = matmulRef(cpu(a).data, cpu(b).data, bias ? cpu(bias).data : null, M, K, N, transB);
    return { pre: new CpuTensor(pre, outShape, 'f32'), act: new CpuTensor(geluRef(pre), outShape, 'f32') };
  }

  matmulResidual(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean, residual: Tensor): Tensor {
    const { M, K, N, outShape } = matmulDims(a, b, bias, transB);
    expectShape('matmulResidual residual', residual, outShape);
    const r = cpu(residual).data;
    const y = matmulRef(cpu(a).data, cpu(b).data, bias ? cpu(bias).data : null, M, K, N, transB);
    for (let i = 0; i < y.length; i++) y[i] += r[i];
    return new CpuTensor(y, outShape, 'f32');
  }

  matmulBackward(gradOut: Tensor, a: Tensor, b: Tensor, transB: boolean, gradB: Tensor | null, gradBias: Tensor | null, needGradA: boolean): Tensor | null {
    const { M, K, N, outShape } = matmulDims(a, b, null, transB);
    expectShape('matmulBackward gradOut', gradOut, outShape);
    if (gradB) expectShape('matmulBackward gradB', gradB, b.shape);
    if (gradBias) expectShape('matmulBackward gradBias', gradBias, [N]);
    const g = matmulBackwardRef(cpu(gradOut).data, cpu(a).data, cpu(b).data, M, K, N, transB);
    if (gradB) addInto(gradB, g.gradB);
    if (gradBias) addInto(gradBias, g.gradBias);
    return needGradA ? new CpuTensor(g.gradA, [...a.shape], 'f32') : null;
  }

  layerNorm(x: Tensor, gamma: Tensor, beta: Tensor, eps: number): { y: Tensor; mean: Tensor; rstd: Tensor } {
    const { rows: M, cols: D } = rowsCols('layerNorm x', x);
    expectShape('layerNorm gamma', gamma, [D]);
    expectShape('layerNorm beta', beta, [D]);
    const r = layerNormRef(cpu(x).data, cpu(gamma).data, cpu(beta).data, M, D, eps);
    return { y: new CpuTensor(r.y, [...x.shape], 'f32'), mean: new CpuTensor(r.mean, [M], 'f32'), rstd: new CpuTensor(r.rstd, [M], 'f32') };
  }

  layerNormBackward(gradY: Tensor, x: Tensor, gamma: Tensor, mean: Tensor, rstd: Tensor, gradGamma: Tensor, gradBeta: Tensor): Tensor {
    const { rows: M, cols: D } = rowsCols('layerNormBackward x', x);
    expectShape('layerNormBackward gradY', gradY, x.shape);
    expectShape('layerNormBackward gamma', gamma, [D]);
    expectShape('layerNormBackward mean', mean, [M]);
    expectShape('layerNormBackward rstd', rstd, [M]);
    expectShape('layerNormBackward gradGamma', gradGamma, [D]);
    expectShape('layerNormBackward gradBeta', gradBeta, [D]);
    const g = layerNormBackwardRef(cpu(gradY).data, cpu(x).data, cpu(gamma).data, cpu(mean).data, cpu(rstd).data, M, D);
    addInto(gradGamma, g.gradGamma);
    addInto(gradBeta, g.gradBeta);
    return new CpuTensor(g.gradX, [...x.shape], 'f32');
  }

  gelu(x: Tensor): Tensor {
    return new CpuTensor(geluRef(cpu(x).data), [...x.shape], 'f32');
  }
  geluBackward(gradY: Tensor, x: Tensor): Tensor {
    expectShape('geluBackward gradY', gradY, x.shape);
    return new CpuTensor(geluBackwardRef(cpu(gradY).data, cpu(x).data), [...x.shape], 'f32');
  }

  add(a: Tensor, b: Tensor): Tensor {
    expectShape('add b', b, a.shape);
    const x = cpu(a).data, y = cpu(b).data;
    return new CpuTensor(Float64Array.from(x, (v, i) => v + y[i]), [...a.shape], 'f32');
  }
  axpy(alpha: number, x: Tensor, y: Tensor): void {
    expectSize('axpy y', y, x.size);
    const xs = cpu(x).data, ys = cpu(y).data;
    for (let i = 0; i < ys.length; i++) ys[i] += alpha * xs[i];
  }
  scale(x: Tensor, alpha: number): void {
    const xs = cpu(x).data;
    for (let i = 0; i < xs.length; i++) xs[i] *= alpha;
  }
  fill(x: Tensor, value: number): void {
    cpu(x).data.fill(x.dtype === 'i32' ? Math.trunc(value) : value);
  }

  embedding(tokens: Tensor, positions: Tensor, wte: Tensor, wpe: Tensor): Tensor {
    expectDType('embedding tokens', tokens, 'i32');
    expectDType('embedding positions', positions, 'i32');
    expectShape('embedding positions', positions, tokens.shape);
    const [V, D] = wte.shape;
    expectShape('embedding wpe', wpe, [wpe.shape[0], D]);
    const out = embeddingRef(cpu(tokens).data, cpu(positions).data, cpu(wte).data, cpu(wpe).data, V, wpe.shape[0], D);
    return new CpuTensor(out, [tokens.size, D], 'f32');
  }
  embeddingWindow(tokens: Tensor, positions: Tensor, start: number, len: number, wte: Tensor, wpe: Tensor): Tensor {
    const { B, S, V, D, P } = embeddingWindowDims(tokens, positions, start, len, wte, wpe);
    const tok = sliceSeqRef(cpu(tokens).data, B, S, 1, start, len);
    const pos = sliceSeqRef(cpu(positions).data, B, S, 1, start, len);
    return new CpuTensor(embeddingRef(tok, pos, cpu(wte).data, cpu(wpe).data, V, P, D), [B * len, D], 'f32');
  }
  embeddingBackward(gradOut: Tensor, tokens: Tensor, positions: Tensor, gradWte: Tensor, gradWpe: Tensor): void {
    expectShape('embeddingBackward positions', positions, tokens.shape);
    const [V, D] = gradWte.shape;
    const P = gradWpe.shape[0];
    expectShape('embeddingBackward gradWpe', gradWpe, [P, D]);
    expectShape('embeddingBackward gradOut', gradOut, [tokens.size, D]);
    const g = embeddingBackwardRef(cpu(gradOut).data, cpu(tokens).data, cpu(positions).data, V, P, D);
    addInto(gradWte, g.gradWte);
    addInto(gradWpe, g.gradWpe);
  }

  sliceSeq(x: Tensor, start: number, len: number): Tensor {
    const { B, S, D } = seqDims('sliceSeq x', x);
    checkSlice('sliceSeq', S, start, len);
    const shape = x.shape.length === 3 ? [B, len, D] : [B, len];
    return new CpuTensor(sliceSeqRef(cpu(x).data, B, S, D, start, len), shape, x.dtype);
  }
  sliceSeqBackward(grad: Tensor, seqLen: number, start: number): Tensor {
    const { B, S: len, D } = seqDims('sliceSeqBackward grad', grad);
    checkSlice('sliceSeqBackward', seqLen, start, len);
    const shape = grad.shape.length === 3 ? [B, seqLen, D] : [B, seqLen];
    return new CpuTensor(sliceSeqBackwardRef(cpu(grad).data, B, seqLen, D, start, len), shape, grad.dtype);
  }
  gatherRows(x: Tensor, index: Tensor): Tensor {
    expectDType('gatherRows index', index, 'i32');
    if (x.shape.length < 1) throw new Error('gatherRows x: expected at least 1 dimension');
    const N = x.shape[0];
    const rowSize = N === 0 ? 0 : x.size / N;
    return new CpuTensor(gatherRowsRef(cpu(x).data, N, rowSize, cpu(index).data), [index.size, ...x.shape.slice(1)], x.dtype);
  }

  gradNorm(grads: Tensor): Tensor {
    return new CpuTensor(Float64Array.of(gradNormRef(cpu(grads).data)), [1], 'f32');
  }
  adamw(params: Tensor, grads: Tensor, m: Tensor, v: Tensor, decayMask: Tensor, gradNorm: Tensor | null, hp: AdamWParams): void {
    for (const [name, t] of [['grads', grads], ['m', m], ['v', v], ['decayMask', decayMask]] as const) expectSize(`adamw ${name}`, t, params.size);
    if (gradNorm) expectSize('adamw gradNorm', gradNorm, 1);
    if (!(hp.step >= 1)) throw new Error(`adamw: step must be ≥ 1 (1-based), got ${hp.step}`);
    adamwRef(cpu(params).data, cpu(grads).data, cpu(m).data, cpu(v).data, cpu(decayMask).data, gradNorm ? cpu(gradNorm).data[0] : null, hp);
  }
}
