// Dense-layer ops and the optimiser on the float64 reference backend: thin wrappers over
// src/reference/nn/ that add the interface's accumulate-into-parameter-gradient semantics.
import type { AdamWParams, NnOps } from '../nnOps.ts';
import type { Tensor } from '../tensor.ts';
import { matmulBackwardRef, matmulRef } from '../../reference/nn/matmul.ts';
import { layerNormBackwardRef, layerNormRef } from '../../reference/nn/layernorm.ts';
import { geluBackwardRef, geluRef } from '../../reference/nn/gelu.ts';
import { mulRef } from '../../reference/nn/elementwise.ts';
import { embeddingBackwardRef, embeddingRef } from '../../reference/nn/embedding.ts';
import { gatherRowsRef, sliceSeqBackwardRef, sliceSeqRef } from '../../reference/nn/slice.ts';
import { adamwRef, gradNormRef } from '../../reference/nn/optim.ts';
import { matmulDims, rowsCols, seqDims } from '../shapes.ts';
import { cpu, CpuTensor } from './cpuTensor.ts';

function addInto(dst: Tensor, src: Float64Array): void {
  const d = cpu(dst).data;
  for (let i = 0; i < src.length; i++) d[i] += src[i];
}

export class CpuNnOps implements NnOps {
  matmul(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean): Tensor {
    const { M, K, N, outShape } = matmulDims(a, b, transB);
    return new CpuTensor(matmulRef(cpu(a).data, cpu(b).data, bias ? cpu(bias).data : null, M, K, N, transB), outShape, 'f32');
  }

  matmulGelu(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean): { pre: Tensor; act: Tensor } {
    const { M, K, N, outShape } = matmulDims(a, b, transB);
    const pre = matmulRef(cpu(a).data, cpu(b).data, bias ? cpu(bias).data : null, M, K, N, transB);
    return { pre: new CpuTensor(pre, outShape, 'f32'), act: new CpuTensor(geluRef(pre), outShape, 'f32') };
  }

  matmulResidual(a: Tensor, b: Tensor, bias: Tensor | null, transB: boolean, residual: Tensor): Tensor {
    const { M, K, N, outShape } = matmulDims(a, b, transB);
    const r = cpu(residual).data;
    const y = matmulRef(cpu(a).data, cpu(b).data, bias ? cpu(bias).data : null, M, K, N, transB);
    for (let i = 0; i < y.length; i++) y[i] += r[i];
    return new CpuTensor(y, outShape, 'f32');
  }

  matmulBackward(gradOut: Tensor, a: Tensor, b: Tensor, transB: boolean, gradB: Tensor | null, gradBias: Tensor | null, needGradA: boolean): Tensor | null {
    const { M, K, N } = matmulDims(a, b, transB);
    const g = matmulBackwardRef(cpu(gradOut).data, cpu(a).data, cpu(b).data, M, K, N, transB);
    if (gradB) addInto(gradB, g.gradB);
    if (gradBias) addInto(gradBias, g.gradBias);
    return needGradA ? new CpuTensor(g.gradA, [...a.shape], 'f32') : null;
  }

  layerNorm(x: Tensor, gamma: Tensor, beta: Tensor, eps: number): { y: Tensor; mean: Tensor; rstd: Tensor } {
    const { rows: M, cols: D } = rowsCols(x);
    const r = layerNormRef(cpu(x).data, cpu(gamma).data, cpu(beta).data, M, D, eps);
    return { y: new CpuTensor(r.y, [...x.shape], 'f32'), mean: new CpuTensor(r.mean, [M], 'f32'), rstd: new CpuTensor(r.rstd, [M], 'f32') };
  }

  layerNormBackward(gradY: Tensor, x: Tensor, gamma: Tensor, mean: Tensor, rstd: Tensor, gradGamma: Tensor, gradBeta: Tensor, into: Tensor | null = null): Tensor {
    const { rows: M, cols: D } = rowsCols(x);
    const g = layerNormBackwardRef(cpu(gradY).data, cpu(x).data, cpu(gamma).data, cpu(mean).data, cpu(rstd).data, M, D);
    addInto(gradGamma, g.gradGamma);
    addInto(gradBeta, g.gradBeta);
    if (into) {
      addInto(into, g.gradX);
      return into;
    }
    return new CpuTensor(g.gradX, [...x.shape], 'f32');
  }

  gelu(x: Tensor): Tensor {
    return new CpuTensor(geluRef(cpu(x).data), [...x.shape], 'f32');
  }
  geluBackward(gradY: Tensor, x: Tensor): Tensor {
    return new CpuTensor(geluBackwardRef(cpu(gradY).data, cpu(x).data), [...x.shape], 'f32');
  }

  add(a: Tensor, b: Tensor): Tensor {
    const x = cpu(a).data,
      y = cpu(b).data;
    return new CpuTensor(
      Float64Array.from(x, (v, i) => v + y[i]),
      [...a.shape],
      'f32',
    );
  }
  mul(a: Tensor, b: Tensor): Tensor {
    return new CpuTensor(mulRef(cpu(a).data, cpu(b).data), [...a.shape], 'f32');
  }
  axpy(alpha: number, x: Tensor, y: Tensor): void {
    const xs = cpu(x).data,
      ys = cpu(y).data;
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
    const [V, D] = wte.shape;
    const out = embeddingRef(cpu(tokens).data, cpu(positions).data, cpu(wte).data, cpu(wpe).data, V, wpe.shape[0], D);
    return new CpuTensor(out, [tokens.size, D], 'f32');
  }
  embeddingWindow(tokens: Tensor, positions: Tensor, start: number, len: number, wte: Tensor, wpe: Tensor): Tensor {
    const { B, S } = seqDims(tokens);
    const [V, D] = wte.shape;
    const P = wpe.shape[0];
    const tok = sliceSeqRef(cpu(tokens).data, B, S, 1, start, len);
    const pos = sliceSeqRef(cpu(positions).data, B, S, 1, start, len);
    return new CpuTensor(embeddingRef(tok, pos, cpu(wte).data, cpu(wpe).data, V, P, D), [B * len, D], 'f32');
  }
  embeddingBackward(gradOut: Tensor, tokens: Tensor, positions: Tensor, gradWte: Tensor, gradWpe: Tensor): void {
    const [V, D] = gradWte.shape;
    const P = gradWpe.shape[0];
    const g = embeddingBackwardRef(cpu(gradOut).data, cpu(tokens).data, cpu(positions).data, V, P, D);
    addInto(gradWte, g.gradWte);
    addInto(gradWpe, g.gradWpe);
  }

  sliceSeq(x: Tensor, start: number, len: number): Tensor {
    const { B, S, D } = seqDims(x);
    const shape = x.shape.length === 3 ? [B, len, D] : [B, len];
    return new CpuTensor(sliceSeqRef(cpu(x).data, B, S, D, start, len), shape, x.dtype);
  }
  sliceSeqBackward(grad: Tensor, seqLen: number, start: number): Tensor {
    const { B, S: len, D } = seqDims(grad);
    const shape = grad.shape.length === 3 ? [B, seqLen, D] : [B, seqLen];
    return new CpuTensor(sliceSeqBackwardRef(cpu(grad).data, B, seqLen, D, start, len), shape, grad.dtype);
  }
  gatherRows(x: Tensor, index: Tensor): Tensor {
    const N = x.shape[0];
    const rowSize = N === 0 ? 0 : x.size / N;
    return new CpuTensor(gatherRowsRef(cpu(x).data, N, rowSize, cpu(index).data), [index.size, ...x.shape.slice(1)], x.dtype);
  }
  gatherRowsMany(xs: readonly Tensor[], index: Tensor): Tensor[] {
    return xs.map((x) => this.gatherRows(x, index));
  }

  gradNorm(grads: Tensor): Tensor {
    return new CpuTensor(Float64Array.of(gradNormRef(cpu(grads).data)), [1], 'f32');
  }
  adamw(params: Tensor, grads: Tensor, m: Tensor, v: Tensor, decayMask: Tensor, gradNorm: Tensor | null, hp: AdamWParams): void {
    adamwRef(cpu(params).data, cpu(grads).data, cpu(m).data, cpu(v).data, cpu(decayMask).data, gradNorm ? cpu(gradNorm).data[0] : null, hp);
  }
}
