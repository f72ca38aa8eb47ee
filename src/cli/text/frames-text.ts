import Table from 'cli-table3';
import { cellFrames, type FrameLike, formatFrame } from '../../engine/derived/index.js';
import { pc } from './colors.js';

/** A stack as a table cell: its first frames (user-frames.ts cellFrames), one per line. */
export function framesCell(frames: FrameLike[], shown = 4): string {
  if (frames.length === 0) return pc.dim('(no stack recorded)');
  const cell = cellFrames(frames, shown);
  const lines = cell.frames.map((f) => formatFrame(f));
  return cell.more > 0 ? `${lines.join('\n')}\n… ${cell.more} more` : lines.join('\n');
}

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
