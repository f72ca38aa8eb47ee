import Table from 'cli-table3';
import { formatFrame, shortPath } from '../engine/analyses/frames/short-path.js';
import type { FrameLike } from '../engine/analyses/frames/user-frames.js';
import { pc } from './colors.js';

/** A stack as a table cell: its first frames (as the analysis chose them), innermost first, one per line. */
export function framesCell(frames: FrameLike[], shown = 4): string {
  if (frames.length === 0) return pc.dim('(no stack recorded)');
  const lines = frames.slice(0, shown).map((f) => formatFrame(f));
  return frames.length > shown ? `${lines.join('\n')}\n… ${frames.length - shown} more` : lines.join('\n');
}

/** A path shortened for a terminal (engine's shortPath: site-packages cut, else the last two components). */
export const shortFile = shortPath;

/** A compact table whose last column is a stack (framesCell) and the others are right-aligned figures. */
export function sitesTable(head: string[], rows: string[][]): string {
  const t = new Table({
    head,
    style: { head: [], border: [], compact: true },
    colAligns: head.map((_, i) => (i === head.length - 1 ? 'left' : 'right')),
  });
  for (const r of rows) t.push(r);
  return t.toString();
}
