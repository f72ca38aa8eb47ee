import type { Snapshot } from '../../../src/engine/model/index.js';
import type { Source } from './protocol.js';

/**
 * The second file of a comparison, decoded once whoever asks for it (the Compare panel's diff
 * and the Run page's curves both need it): the last source asked for is kept; a failed load is not.
 */
export function lastSnapshot(
  load: (source: Source, id: number) => Promise<Snapshot>,
): (source: Source, id: number) => Promise<Snapshot> {
  let kept: { key: string; snapshot: Promise<Snapshot> } | undefined;
  return (source, id) => {
    const key = sourceKey(source);
    if (kept?.key !== key) {
      const mine = { key, snapshot: load(source, id) };
      kept = mine;
      mine.snapshot.catch(() => {
        if (kept === mine) kept = undefined;
      });
    }
    return kept.snapshot;
  };
}

export function sourceKey(source: Source): string {
  if ('url' in source) return source.url;
  if ('file' in source) return `${source.name}:${source.file.size}:${source.file.lastModified}`;
  // A report page carries each file once, under its name.
  return `embedded:${source.name}`;
}
