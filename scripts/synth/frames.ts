/**
 * Frames and stacks. PyTorch symbolizes each distinct frame once and reuses that dict object in
 * every traceback, so a pickle holds each frame once and refers to it by memo index afterwards;
 * the generator does the same by wrapping every frame dict in one `Shared`.
 */
import { type PyValue, Shared } from '../../src/engine/encode/index.js';

/** name, filename, line: a Python frame has a real file and line; C++ frames mostly '??' and 0. */
export type FrameSpec = readonly [name: string, filename: string, line: number];

export interface Stack {
  readonly id: number;
  /** Innermost first, as PyTorch lists them. */
  readonly frames: readonly Shared[];
  readonly specs: readonly FrameSpec[];
  /** The one list object used for this stack when identical stacks share their list. */
  readonly list: Shared;
}

export class StackTable {
  private readonly frames = new Map<string, Shared>();
  private readonly stacks = new Map<string, Stack>();

  get frameCount(): number {
    return this.frames.size;
  }

  get stackCount(): number {
    return this.stacks.size;
  }

  /** The stack registered under `key`, built on first use. */
  stack(key: string, build: () => readonly FrameSpec[]): Stack {
    let s = this.stacks.get(key);
    if (s === undefined) {
      const specs = build();
      const frames = specs.map((f) => this.frame(f));
      s = { id: this.stacks.size, frames, specs, list: new Shared(frames as PyValue[]) };
      this.stacks.set(key, s);
    }
    return s;
  }

  private frame(spec: FrameSpec): Shared {
    const key = `${spec[0]}\u0000${spec[1]}\u0000${spec[2]}`;
    let f = this.frames.get(key);
    if (f === undefined) {
      // Key order as PyTorch writes it.
      f = new Shared({ name: spec[0], filename: spec[1], line: spec[2] });
      this.frames.set(key, f);
    }
    return f;
  }
}
