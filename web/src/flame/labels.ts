import { shortName } from '../../../src/engine/derived/index.js';
import { type FlameTree, NO_STACK_FRAME, ROOT_FRAME } from '../../../src/engine/views/flame/index.js';

/**
 * A frame's label: its name (C++ without its signature), with its file and line where another
 * frame of the tree has the same name (a model's many `forward`s); or what the root and
 * stackless allocations stand for.
 */
export function frameLabel(t: FlameTree, i: number): string {
  const f = t.frame[i]!;
  if (f === ROOT_FRAME) return 'all live memory';
  if (f === NO_STACK_FRAME) return '(allocated before recording or without a stack)';
  const frame = t.frames[f]!;
  const name = shortName(frame.name) || '(unnamed)';
  if (!repeatedNames(t).has(frame.name) || frame.filename === '' || frame.filename === '??') return name;
  const file = frame.filename.split(/[\\/]/).pop();
  return frame.line > 0 ? `${name} (${file}:${frame.line})` : `${name} (${file})`;
}

const repeated = new WeakMap<FlameTree, Set<string>>();

/** Names that more than one frame of the tree carries; computed once per tree. */
function repeatedNames(t: FlameTree): Set<string> {
  let names = repeated.get(t);
  if (names === undefined) {
    const seen = new Set<string>();
    names = new Set();
    for (const f of t.frames) {
      if (seen.has(f.name)) names.add(f.name);
      seen.add(f.name);
    }
    repeated.set(t, names);
  }
  return names;
}
