// The WebGPU limits the kernels need, what the page requests, and which ones an adapter lacks.
// Pure (no GPU calls): the worker passes in `adapter.limits`, and tests pass plain objects.
//
// Each need is derived from the kernels (shaders/*.wgsl and their pipeline specs in
// src/backend/webgpu/); every one is at or under WebGPU's default, so any conforming adapter
// offers it, and the page requests max(need, default). The two buffer-size limits are the
// exception: a tensor's buffer grows with the knobs (the attention probabilities, B·H·S·S floats,
// pass the default 128 MiB binding at the largest batch and width), so the page asks for all the
// adapter offers there, and a smaller adapter fails only at a run that large.

/** A limit the page relies on, by its WebGPU name. */
export type LimitName =
  | 'maxComputeInvocationsPerWorkgroup'
  | 'maxComputeWorkgroupSizeX'
  | 'maxComputeWorkgroupSizeY'
  | 'maxComputeWorkgroupStorageSize'
  | 'maxComputeWorkgroupsPerDimension'
  | 'maxStorageBuffersPerShaderStage'
  | 'maxStorageBufferBindingSize'
  | 'maxBufferSize';

export interface LimitNeed {
  name: LimitName;
  /** The least value the kernels work with. */
  need: number;
  /** WebGPU's default (the value every adapter offers at least). */
  standard: number;
  /** Request the adapter's whole value (bigger runs use it) rather than max(need, default). */
  asMuchAsOffered: boolean;
  /** Which kernels need it, in a few words. */
  why: string;
}

export const LIMIT_NEEDS: readonly LimitNeed[] = [
  {
    name: 'maxComputeInvocationsPerWorkgroup',
    need: 256,
    standard: 256,
    asMuchAsOffered: false,
    why: '256-thread tree reductions (actor_loss, optim, whiten, aggregate) and layernorm’s 16 × 16 parameter gradients',
  },
  { name: 'maxComputeWorkgroupSizeX', need: 256, standard: 256, asMuchAsOffered: false, why: 'workgroups of 256 threads along x' },
  { name: 'maxComputeWorkgroupSizeY', need: 16, standard: 256, asMuchAsOffered: false, why: 'layernorm’s 16 lanes along y' },
  {
    name: 'maxComputeWorkgroupStorageSize',
    need: 15360,
    standard: 16384,
    asMuchAsOffered: false,
    why: 'the decode step keeps up to 3,840 floats of the model in workgroup memory',
  },
  {
    name: 'maxComputeWorkgroupsPerDimension',
    need: 65535,
    standard: 65535,
    asMuchAsOffered: false,
    why: 'grids fold into two dimensions past 65,535 workgroups',
  },
  { name: 'maxStorageBuffersPerShaderStage', need: 8, standard: 8, asMuchAsOffered: false, why: 'the optimiser and loss kernels bind 8 storage buffers' },
  {
    name: 'maxStorageBufferBindingSize',
    need: 134217728,
    standard: 134217728,
    asMuchAsOffered: true,
    why: 'each tensor is one binding; the largest grow with batch and width',
  },
  { name: 'maxBufferSize', need: 268435456, standard: 268435456, asMuchAsOffered: true, why: 'tensors are pooled in power-of-two buffers' },
];

/** A limit the adapter offers less of than the page needs. */
export interface LimitShortfall {
  name: LimitName;
  need: number;
  have: number;
}

/** One row of the "About this GPU" panel: what the page requested and what the adapter offers. */
export interface LimitRow {
  name: LimitName;
  need: number;
  requested: number;
  adapter: number;
}

/** Read a limit by name from `adapter.limits` (a GPUSupportedLimits or a plain object); NaN when absent. */
function read(limits: unknown, name: LimitName): number {
  const v = (limits as Record<string, unknown>)[name];
  return typeof v === 'number' ? v : Number.NaN;
}

/** The limits the adapter offers less of than the page needs (an absent limit counts as its default). */
export function limitShortfalls(adapterLimits: unknown): LimitShortfall[] {
  const out: LimitShortfall[] = [];
  for (const l of LIMIT_NEEDS) {
    const raw = read(adapterLimits, l.name);
    const have = Number.isNaN(raw) ? l.standard : raw;
    if (have < l.need) out.push({ name: l.name, need: l.need, have });
  }
  return out;
}

/** The `requiredLimits` for requestDevice: max(need, default), or all the adapter offers where bigger runs use it. */
export function requestedLimits(adapterLimits: unknown): Record<LimitName, number> {
  const out = {} as Record<LimitName, number>;
  for (const l of LIMIT_NEEDS) {
    const raw = read(adapterLimits, l.name);
    const have = Number.isNaN(raw) ? l.standard : raw;
    out[l.name] = l.asMuchAsOffered ? Math.max(have, l.need) : Math.max(l.need, l.standard);
  }
  return out;
}

/** The panel's rows: each limit's need, the value requested, and the adapter's value. */
export function limitRows(adapterLimits: unknown): LimitRow[] {
  const req = requestedLimits(adapterLimits);
  return LIMIT_NEEDS.map((l) => ({ name: l.name, need: l.need, requested: req[l.name], adapter: read(adapterLimits, l.name) }));
}

/** "maxComputeWorkgroupStorageSize: this page needs 16384, your GPU offers 8192". */
export function shortfallLine(s: LimitShortfall): string {
  return `${s.name}: this page needs ${s.need}, your GPU offers ${s.have}`;
}

/** The error message when limits fall short: every one named, with both values. */
export function shortfallMessage(list: readonly LimitShortfall[]): string {
  const what = list.length === 1 ? 'a WebGPU limit' : `${list.length} WebGPU limits`;
  return `This GPU offers less than the playground needs in ${what}: ${list.map(shortfallLine).join('; ')}.`;
}
