import type { PyValue } from '../../src/engine/encode/pickle-values.js';
import { concatChunks, PickleWriter } from '../../src/engine/encode/pickle-writer.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import type { Snapshot } from '../../src/engine/model/snapshot.js';

/** A snapshot value (hand-made, or a slice plan's) pickled by the project's writer and loaded back. */
export function snapshotOf(value: PyValue, protocol: 2 | 3 | 4 | 5 = 4): Snapshot {
  const chunks: Uint8Array[] = [];
  new PickleWriter((c) => chunks.push(c), { protocol }).dump(value);
  return loadSnapshotBytes(concatChunks(chunks));
}
