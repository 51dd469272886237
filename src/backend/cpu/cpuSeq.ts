// Sequence ops (attention, KV-cached attention, sampling) on the float64 reference backend.
import { attentionBackwardRef, attentionCachedRef, attentionRef } from '../../reference/seq/attention.ts';
import { decodeStepRef } from '../../reference/seq/decode.ts';
import { sampleStepRef } from '../../reference/seq/sample.ts';
import { attentionDims, cachedDims, decodeStepDims, sampleDims } from '../shapes.ts';
import type { DecodeModel, SampleParams, SeqOps } from '../seqOps.ts';
import type { Tensor } from '../tensor.ts';
import { cpu, CpuTensor } from './cpuTensor.ts';

export class CpuSeqOps implements SeqOps {
  attention(qkv: Tensor, attnMask: Tensor, nHead: number): { out: Tensor; probs: Tensor } {
    const { B, S, H, D } = attentionDims(qkv, attnMask, nHead);
    const { out, probs } = attentionRef(cpu(qkv).data, cpu(attnMask).data, { B, S, H, D });
    return { out: new CpuTensor(out, [B * S, D], 'f32'), probs: new CpuTensor(probs, [B, H, S, S], 'f32') };
  }

  attentionBackward(gradOut: Tensor, qkv: Tensor, probs: Tensor, _out: Tensor, _nHead: number): Tensor {
    // The float64 reference sums the softmax backward's row terms from P and dP itself (no need for out).
    // H = nHead (checked): read from probs (B,H,S,S).
    const [B, H, S] = probs.shape;
    const D = qkv.shape[1] / 3;
    const g = attentionBackwardRef(cpu(gradOut).data, cpu(qkv).data, cpu(probs).data, { B, S, H, D });
    return new CpuTensor(g, [B * S, 3 * D], 'f32');
  }

  attentionCached(qkv: Tensor, kCache: Tensor, vCache: Tensor, attnMask: Tensor, start: number, nHead: number): Tensor {
    const dims = cachedDims(qkv, kCache, start, nHead);
    const out = attentionCachedRef(cpu(qkv).data, cpu(kCache).data, cpu(vCache).data, cpu(attnMask).data, dims);
    return new CpuTensor(out, [dims.B * dims.L, dims.D], 'f32');
  }

  sampleStep(logits: Tensor, sequences: Tensor, attnMask: Tensor, positions: Tensor, finished: Tensor, pos: number, params: SampleParams, logprobs: Tensor | null = null): void {
    const dims = sampleDims(logits, sequences);
    sampleStepRef(cpu(logits).data, cpu(sequences).data, cpu(attnMask).data, cpu(positions).data, cpu(finished).data, dims, pos, params, logprobs ? cpu(logprobs).data : null);
  }

  decodeStep(params: Tensor, model: DecodeModel, kv: Tensor, sequences: Tensor, positions: Tensor, attnMask: Tensor, pos: number): Tensor {
    const { B, Smax, V } = decodeStepDims(model, sequences);
    const logits = decodeStepRef(cpu(params).data, model, cpu(kv).data, cpu(sequences).data, cpu(positions).data, cpu(attnMask).data, B, Smax, pos);
    return new CpuTensor(logits, [B, V], 'f32');
  }
}
