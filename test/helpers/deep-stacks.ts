import { type PyValue, shared } from '../../src/engine/encode/pickle-values.js';

/**
 * A snapshot whose allocations were made `depth` frames deep, as recursive code or
 * torch.compile'd graphs make them: every stack is `depth` calls of one recursive user function
 * under `main`, ending in a leaf of its own. Frame dicts are shared objects (as PyTorch's are),
 * so the pickle stays small however deep the stacks are.
 *
 * Planted, device 0, one small segment at BASE: `weight` (1 MiB, from leaf `make_weight`) and
 * `grad` (512 KiB, from `make_grad`) live at the end; `scratch` (256 KiB, from `make_weight`'s
 * stack) allocated and freed between them. The allocated peak is after entry 2 (1.75 MiB);
 * after the last entry 1.5 MiB is live.
 */
export const DEEP = {
  base: 0x7f0000000000,
  weight: 1 << 20,
  scratch: 256 << 10,
  grad: 512 << 10,
  file: '/home/user/project/model.py',
} as const;

export function deepStackValue(depth: number, opts: { distinctFrames?: boolean } = {}): PyValue {
  const frame = (name: string, line: number) => shared({ filename: DEEP.file, line, name });
  const recurse = frame('recurse', 20);
  // Distinct frames: every level its own line (generated code), so the frame table is as deep.
  const levels = opts.distinctFrames
    ? Array.from({ length: depth }, (_, i) => frame('layer', 1000 + i))
    : null;
  const main = frame('main', 90);
  const stackOf = (leaf: string, line: number): PyValue => {
    const frames: PyValue[] = [frame(leaf, line)];
    for (let i = 0; i < depth; i++) frames.push(levels === null ? recurse : levels[depth - 1 - i]!);
    frames.push(main);
    return shared(frames);
  };
  const weightStack = stackOf('make_weight', 11);
  const gradStack = stackOf('make_grad', 15);
  const { weight, scratch, grad } = DEEP;
  const e = (action: string, addr: number, size: number, frames: PyValue, t: number) => ({
    action,
    addr,
    size,
    stream: 0,
    time_us: t,
    frames,
  });
  const b = DEEP.base;
  return {
    segments: [
      {
        device: 0,
        address: b,
        total_size: 2 * (weight + grad),
        stream: 0,
        segment_type: 'large',
        blocks: [
          {
            address: b,
            size: weight,
            requested_size: weight,
            state: 'active_allocated',
            frames: weightStack,
          },
          {
            address: b + weight,
            size: grad,
            requested_size: grad,
            state: 'active_allocated',
            frames: gradStack,
          },
          { address: b + weight + grad, size: weight + grad, requested_size: 0, state: 'inactive' },
        ],
      },
    ],
    device_traces: [
      [
        e('alloc', b, weight, weightStack, 10),
        e('alloc', b + weight + grad, scratch, weightStack, 20),
        e('alloc', b + weight, grad, gradStack, 30),
        e('free_requested', b + weight + grad, scratch, weightStack, 40),
        e('free_completed', b + weight + grad, scratch, weightStack, 41),
      ],
    ],
  };
}
