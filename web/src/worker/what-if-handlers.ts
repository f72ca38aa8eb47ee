import { diffSnapshots } from '../../../src/engine/analyses/diff/index.js';
import type { DeviceModel, Snapshot } from '../../../src/engine/model/index.js';
import { simulate, sweepPlan, sweepStep } from '../../../src/engine/simulate/index.js';
import type { Source } from './protocol.js';
import type { WhatIfQueries } from './what-if-protocol.js';

type Handlers = {
  [K in keyof WhatIfQueries]: (
    args: WhatIfQueries[K]['args'],
    id: number,
  ) => WhatIfQueries[K]['result'] | Promise<WhatIfQueries[K]['result']>;
};

export type LoadOther = (source: Source, id: number) => Promise<Snapshot>;

/**
 * The worker's side of the What-if and Compare panels: `simulate` and `diffSnapshots` called as
 * the CLI calls them. A sweep is asked one run per message so the worker answers the other views
 * between runs. The compared file is held beside the open one until another is compared.
 */
export function whatIfHandlers(
  current: () => Snapshot,
  deviceOf: (device: number) => DeviceModel,
  /** The compared file, decoded once and kept until another is compared (other-snapshot.ts). */
  otherOf: LoadOther,
): Handlers {
  const capacityOf = (c: number | null) => c ?? undefined;
  return {
    whatIf: ({ device, set, capacity, torchVersion }) => {
      const r = simulate(current(), [deviceOf(device)], {
        set: set.trim() === '' ? undefined : set,
        capacity: capacityOf(capacity),
        torchVersion,
        sweep: false,
      });
      return r.devices[0]!;
    },
    sweepPlan: ({ torchVersion }) => sweepPlan(current(), { torchVersion }),
    sweepRun: ({ device, index, capacity, torchVersion }) =>
      sweepStep(current(), deviceOf(device), index, { torchVersion, capacity: capacityOf(capacity) }),
    compare: async ({ device, other: source, top, fullStacks }, id) => {
      const a = current();
      const b = await otherOf(source, id);
      const same = b.devices.filter((d) => d.device === device);
      return diffSnapshots(a, b, [deviceOf(device)], same.length > 0 ? same : b.devices, { top, fullStacks });
    },
  };
}
