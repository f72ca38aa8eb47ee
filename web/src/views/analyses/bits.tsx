import type { ReactNode } from 'react';
import { cellFrames, formatFrame, topUserFrame } from '../../../../src/engine/derived/index.js';
import type { Frame } from '../../../../src/engine/model/index.js';
import { exactBytes, formatBytes, formatCount } from '../../format.js';

/** What a panel does with an entry, allocation or segment it mentions: select it everywhere. */
export interface Select {
  entry: (k: number) => void;
  /** Pins an allocation and selects the entry that made it (timeline, pool state, tables). */
  alloc: (id: number, entry: number) => void;
  /** Shows a segment in the pool state after an entry. */
  segment: (address: number, entry: number) => void;
  /** Opens the Blocks table on the blocks whose stack passes through a frame. */
  blocksThrough: (frame: string) => void;
  /** Opens the Blocks table on the blocks whose address lies in [from, to) (a segment's). */
  blocksIn: (from: number, to: number) => void;
  /** Opens the Events table on the entries first..last. */
  eventsIn: (first: number, last: number) => void;
}

/** "blocks through FRAME": the Blocks table on the blocks whose stack passes through a site's innermost frame. */
export function BlocksThrough({ frames, select }: { frames: Frame[]; select: Select }) {
  const name = topUserFrame(frames)?.name;
  if (name === undefined) return null;
  return (
    <button type="button" className="link" onClick={() => select.blocksThrough(name)}>
      blocks through {name}
    </button>
  );
}

/** "allocation #12 (entry 1,234)" as a link that pins the allocation everywhere. */
export function AllocLink({ id, entry, select }: { id: number; entry: number; select: Select }) {
  return (
    <button type="button" className="link" data-alloc={id} onClick={() => select.alloc(id, entry)}>
      #{formatCount(id)}
    </button>
  );
}

/** A size in KiB/MiB/GiB with the exact byte count on hover. */
export function Bytes({ n }: { n: number }) {
  return <span title={exactBytes(n)}>{formatBytes(n)}</span>;
}

/** "entry 1,234" as a link that selects the entry in the timeline and pool state. */
export function EntryLink({ k, select }: { k: number; select: Select }) {
  if (k < 0) return <>before the first entry</>;
  return (
    <button type="button" className="link" data-entry={k} onClick={() => select.entry(k)}>
      entry {formatCount(k)}
    </button>
  );
}

/** A stack as the CLI's tables show it: the first frames (cellFrames), innermost first. */
export function Frames({ frames, shown = 4 }: { frames: Frame[]; shown?: number }) {
  if (frames.length === 0) return <span className="dim">(no stack recorded)</span>;
  const cell = cellFrames(frames, shown);
  return (
    <ul className="frames">
      {cell.frames.map((f, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: frames repeat; position is the identity
        <li key={i} title={`${f.filename}:${f.line}`}>
          {formatFrame(f)}
        </li>
      ))}
      {cell.more > 0 && <li className="dim">… {cell.more} more</li>}
    </ul>
  );
}

/** A compact table: a header row and the body rows given. */
export function Table({ head, children }: { head: string[]; children: ReactNode }) {
  return (
    <table className="panel-table">
      <thead>
        <tr>
          {head.map((h) => (
            <th key={h}>{h}</th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  );
}
