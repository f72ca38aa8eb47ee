/** Checks of the options that plant a known OOM cause or a rank's extra buffer. */
import { OOM_CAUSES, type OomCause } from './oom-plant.js';

export type { OomCause } from './oom-plant.js';

const MiB = 2 ** 20;

export function validateScenarios(o: {
  oomCause?: OomCause;
  extraBuffer?: number;
  expandableSegments?: boolean;
}): void {
  if (o.oomCause !== undefined && !OOM_CAUSES.includes(o.oomCause))
    throw new RangeError(`oomCause must be one of ${OOM_CAUSES.join(', ')}`);
  // Expandable segments unmap the pages of freed blocks before an OOM: they do not fragment so.
  if (o.oomCause === 'fragmentation' && o.expandableSegments)
    throw new RangeError('an OOM by fragmentation cannot be planted with expandable segments');
  const b = o.extraBuffer ?? 0;
  if (b !== 0 && (!Number.isInteger(b) || b < 10 * MiB || b % (2 * MiB) !== 0 || b > 2 ** 40))
    throw new RangeError('extraBuffer must be a multiple of 2 MiB from 10 MiB (a segment of its own)');
}
