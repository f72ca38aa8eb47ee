import Table from 'cli-table3';
import type { Frame } from '../engine/model/stack-table.js';
import { pc } from './colors.js';

/** A stack as a table cell: its first frames, innermost first, one per line. */
export function framesCell(frames: Frame[], shown = 4): string {
  if (frames.length === 0) return pc.dim('(no stack recorded)');
  const lines = frames.slice(0, shown).map((f) => `${f.name} (${shortFile(f.filename)}:${f.line})`);
  return frames.length > shown ? `${lines.join('\n')}\n… ${frames.length - shown} more` : lines.join('\n');
}

/** The last two path components: enough to tell files apart in a terminal. */
export function shortFile(path: string): string {
  const parts = path.split('/');
  return parts.length > 2 ? `…/${parts.slice(-2).join('/')}` : path;
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
