/** Shape of the synthetic GPT model: parameters and activation sizes, chosen from the seed. */
import type { Rng } from './rng.js';

export interface ModelConfig {
  readonly layers: number;
  readonly d: number;
  readonly heads: number;
  readonly vocab: number;
  readonly batch: number;
  readonly seqMax: number;
}

export interface ParamSpec {
  readonly name: string;
  /** fp32 bytes. */
  readonly bytes: number;
  /** Elements of the bf16 copy autocast makes for a matmul weight (0 for norms and biases). */
  readonly castElems: number;
}

/** Activations are bf16 under autocast; parameters, gradients and optimizer state fp32. */
export const ACT = 2;
const FP32 = 4;
/** Keep the workload's peak well below an 80 GB device. */
const BUDGET = 36e9;

export function chooseModel(rng: Rng): ModelConfig {
  const d = rng.pick([512, 768, 1024, 1280, 1600]);
  const base: ModelConfig = {
    layers: rng.int(4, 16),
    d,
    heads: d / 64,
    vocab: rng.pick([32000, 50257, 50304]),
    batch: rng.pick([4, 8, 16]),
    seqMax: rng.pick([512, 1024, 2048]),
  };
  let m = base;
  while (estimatePeak(m) > BUDGET && m.batch > 1) m = { ...m, batch: m.batch / 2 };
  while (estimatePeak(m) > BUDGET && m.seqMax > 256) m = { ...m, seqMax: m.seqMax / 2 };
  return m;
}

export function paramSpecs(m: ModelConfig): ParamSpec[] {
  const d = m.d;
  const vec = (name: string, n: number): ParamSpec => ({ name, bytes: n * FP32, castElems: 0 });
  const mat = (name: string, rows: number, cols: number): ParamSpec => ({
    name,
    bytes: rows * cols * FP32,
    castElems: rows * cols,
  });
  const specs: ParamSpec[] = [mat('wte', m.vocab, d), mat('wpe', m.seqMax, d)];
  for (let i = 0; i < m.layers; i++) {
    const p = `h.${i}.`;
    specs.push(
      vec(`${p}ln_1.weight`, d),
      vec(`${p}ln_1.bias`, d),
      mat(`${p}attn.c_attn.weight`, 3 * d, d),
      vec(`${p}attn.c_attn.bias`, 3 * d),
      mat(`${p}attn.c_proj.weight`, d, d),
      vec(`${p}attn.c_proj.bias`, d),
      vec(`${p}ln_2.weight`, d),
      vec(`${p}ln_2.bias`, d),
      mat(`${p}mlp.c_fc.weight`, 4 * d, d),
      vec(`${p}mlp.c_fc.bias`, 4 * d),
      mat(`${p}mlp.c_proj.weight`, d, 4 * d),
      vec(`${p}mlp.c_proj.bias`, d),
    );
  }
  specs.push(vec('ln_f.weight', d), vec('ln_f.bias', d));
  return specs;
}

/** Parameters + gradients + Adam state + optimizer temporaries + saved activations + logits. */
function estimatePeak(m: ModelConfig): number {
  const params = paramSpecs(m).reduce((s, p) => s + p.bytes, 0);
  const tokens = m.batch * m.seqMax;
  const perLayer = tokens * m.d * ACT * 17 + 12 * m.d * m.d * ACT;
  const head = tokens * m.vocab * (ACT + 2 * FP32);
  return 5 * params + m.layers * perLayer + head;
}
