/**
 * The run's worst finding, which its text and its page lead with: an OOM first (the largest
 * failing request among them), else the site growth or the departing cell with the most bytes
 * at stake (a site's growth over its windows, a cell's excess over what was expected).
 */
import type { RunReport } from './run-report.js';
import { growthHeadline, oomHeadline, outlierHeadline } from './run-words.js';

export interface RunLead {
  kind: 'oom' | 'growth' | 'outlier';
  headline: string;
  /** The snapshot it is about (an OOM's dump, a growing site's last window, the departing cell). */
  file: string | null;
  stake_bytes: number;
}

export function runLead(r: RunReport): RunLead | null {
  const ooms = r.ooms.map((o) => ({
    kind: 'oom' as const,
    headline: oomHeadline(o),
    file: o.file,
    stake_bytes: Math.max(0, ...o.devices.flatMap((d) => d.reports.map((x) => x.requested_bytes))),
  }));
  const worst = (leads: RunLead[]) =>
    leads.reduce<RunLead | null>((x, y) => (x === null || y.stake_bytes > x.stake_bytes ? y : x), null);
  if (ooms.length > 0) return worst(ooms);
  const cell = (rank: number, device: number, step: number | undefined) =>
    r.rows.find((w) => w.kind === 'step' && w.rank === rank && w.device === device && w.steps?.first === step)
      ?.file ?? null;
  const growth = r.growth.map((g) => {
    const first = g.ranks[0]!;
    return {
      kind: 'growth' as const,
      headline: growthHeadline(g),
      file: cell(first.rank, first.device, first.steps.at(-1)),
      stake_bytes: g.ranks.reduce((n, k) => n + k.bytes.at(-1)! - k.bytes[0]!, 0),
    };
  });
  const outliers = r.outliers.map((o) => ({
    kind: 'outlier' as const,
    headline: outlierHeadline(o),
    file: cell(o.rank, o.device, o.steps.first),
    stake_bytes: o.delta,
  }));
  return worst([...growth, ...outliers]);
}
