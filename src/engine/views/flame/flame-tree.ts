import { liveAllocated } from '../../analyses/peak/peak.js';
import { isUserCode, shownFrames } from '../../derived/frames/user-frames.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import type { Frame } from '../../model/stack-table.js';

/** A frame of the flame graph: where it is, and whether it is the user's own code. */
export interface FlameFrame {
  filename: string;
  line: number;
  name: string;
  user: boolean;
}

/** Node frame index of the root (all live memory) and of allocations without a stack. */
export const ROOT_FRAME = -1;
export const NO_STACK_FRAME = -2;

/**
 * Live memory after one entry as a prefix tree of allocating stacks, outermost frame at the
 * root, in preorder with children widest first: a node's subtree is the `size` nodes from it,
 * and the allocations under it are `alloc_ids[alloc_start[i] .. alloc_start[i + size[i]]]`
 * (each node's own allocations largest first). Flat typed arrays: millions of live allocations
 * cost no objects, and the page draws the icicle straight from them.
 */
export interface FlameTree {
  device: number;
  after_entry: number;
  full_stacks: boolean;
  total_bytes: number;
  frames: FlameFrame[];
  frame: Int32Array;
  depth: Int32Array;
  /** Requested bytes and allocation count of the subtree. */
  bytes: Float64Array;
  count: Int32Array;
  size: Int32Array;
  alloc_start: Int32Array;
  alloc_ids: Int32Array;
}

export interface FlameOptions {
  /** Whole stacks instead of the frames in the user's own code (as `peak --full-stacks`). */
  fullStacks?: boolean;
}

interface Trie {
  frame: number;
  children: Map<number, Trie>;
  ids: number[];
  bytes: number;
  count: number;
}

/** The allocations live after entry `at` (as `peak` counts them), folded by allocating stack. */
export function flameTree(s: Snapshot, d: DeviceModel, at: number, opts: FlameOptions = {}): FlameTree {
  const full = opts.fullStacks ?? false;
  const frames = new FrameIndex(s, full);
  const root = trie(ROOT_FRAME);
  const a = d.allocations;
  for (const id of liveAllocated(d, at)) {
    let node = root;
    for (const f of frames.path(a.stack[id]!)) {
      let next = node.children.get(f);
      if (next === undefined) node.children.set(f, (next = trie(f)));
      node = next;
    }
    node.ids.push(id);
  }
  total(root, a.size);
  return {
    device: d.device,
    after_entry: at,
    full_stacks: full,
    ...flatten(root, a.size),
    frames: frames.list,
  };
}

function trie(frame: number): Trie {
  return { frame, children: new Map(), ids: [], bytes: 0, count: 0 };
}

/**
 * Bytes and counts of every subtree. Iterative, as every walk here: stacks can be 100,000 frames
 * deep (recursive code, compiled graphs, hostile files), far past the JS call stack.
 */
function total(root: Trie, size: Float64Array): void {
  const order = preorder(root, (n) => n.children.values());
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i]!.n;
    n.bytes = n.ids.reduce((sum, id) => sum + size[id]!, 0);
    n.count = n.ids.length;
    for (const c of n.children.values()) {
      n.bytes += c.bytes;
      n.count += c.count;
    }
  }
}

/** Nodes in preorder with their depth, children in the order `kids` gives them. */
function preorder(root: Trie, kids: (n: Trie) => Iterable<Trie>): { n: Trie; depth: number }[] {
  const out: { n: Trie; depth: number }[] = [];
  const todo = [{ n: root, depth: 0 }];
  while (todo.length > 0) {
    const next = todo.pop()!;
    out.push(next);
    const children = [...kids(next.n)];
    for (let i = children.length - 1; i >= 0; i--) todo.push({ n: children[i]!, depth: next.depth + 1 });
  }
  return out;
}

function flatten(root: Trie, size: Float64Array) {
  const nodes = preorder(root, (n) =>
    [...n.children.values()].sort((x, y) => y.bytes - x.bytes || y.count - x.count),
  );
  const m = nodes.length;
  const out = {
    total_bytes: root.bytes,
    frame: new Int32Array(m),
    depth: new Int32Array(m),
    bytes: new Float64Array(m),
    count: new Int32Array(m),
    size: new Int32Array(m),
    alloc_start: new Int32Array(m + 1),
    alloc_ids: new Int32Array(root.count),
  };
  let k = 0;
  nodes.forEach(({ n, depth }, i) => {
    out.frame[i] = n.frame;
    out.depth[i] = depth;
    out.bytes[i] = n.bytes;
    out.count[i] = n.count;
    out.alloc_start[i] = k;
    for (const id of n.ids.sort((x, y) => size[y]! - size[x]!)) out.alloc_ids[k++] = id;
  });
  out.alloc_start[m] = k;
  // A subtree ends where the next node at its depth or shallower begins.
  const open: number[] = [];
  for (let i = 0; i <= m; i++) {
    const depth = i < m ? out.depth[i]! : -1;
    while (open.length > 0 && out.depth[open[open.length - 1]!]! >= depth) {
      const j = open.pop()!;
      out.size[j] = i - j;
    }
    open.push(i);
  }
  return out;
}

/** Stack id -> frame indices of the tree, outermost first, each frame listed once. */
class FrameIndex {
  readonly list: FlameFrame[] = [];
  private readonly byFrame = new Map<Frame, number>();
  private readonly paths = new Map<number, number[]>();

  constructor(
    private readonly s: Snapshot,
    private readonly full: boolean,
  ) {}

  path(stack: number): number[] {
    let p = this.paths.get(stack);
    if (p === undefined) {
      const shown = shownFrames(this.s.stacks.frames(stack), { full: this.full });
      p = shown.length === 0 ? [NO_STACK_FRAME] : shown.reverse().map((f) => this.indexOf(f));
      this.paths.set(stack, p);
    }
    return p;
  }

  private indexOf(f: Frame): number {
    let i = this.byFrame.get(f);
    if (i === undefined) {
      i = this.list.length;
      this.list.push({ filename: f.filename, line: f.line, name: f.name, user: isUserCode(f) });
      this.byFrame.set(f, i);
    }
    return i;
  }
}

/** The allocations under node `i` (its subtree), largest first within each node. */
export function allocationsUnder(t: FlameTree, i: number): Int32Array {
  return t.alloc_ids.subarray(t.alloc_start[i]!, t.alloc_start[i + t.size[i]!]!);
}
