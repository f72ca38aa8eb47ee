import type { Frame, StackTable } from '../../model/stack-table.js';
import { shownFrames } from './user-frames.js';

/** Site of entries whose stack the file does not have. */
export const NO_SITE = 0;

/**
 * Code sites: stack ids folded to the frames a report shows (the frames in the user's own code,
 * or whole stacks), interned once per stack id. Analyses count per site in typed arrays indexed
 * by site, and ask for frames only for the few sites they print.
 */
export class Sites {
  private readonly siteOfStack: Int32Array;
  private readonly index = new Map<string, number>([['', NO_SITE]]);
  private readonly frameLists: Frame[][] = [[]];

  constructor(
    private readonly stacks: StackTable,
    private readonly fullStacks: boolean,
  ) {
    this.siteOfStack = new Int32Array(stacks.stackCount).fill(-1);
  }

  get count(): number {
    return this.frameLists.length;
  }

  of(stack: number): number {
    if (stack < 0) return NO_SITE;
    const known = this.siteOfStack[stack]!;
    if (known >= 0) return known;
    const frames = shownFrames(this.stacks.frames(stack), { full: this.fullStacks });
    const key = frames.map((f) => `${f.filename}:${f.line}:${f.name}`).join('\n');
    let site = this.index.get(key);
    if (site === undefined) {
      site = this.frameLists.length;
      this.frameLists.push(frames);
      this.index.set(key, site);
    }
    this.siteOfStack[stack] = site;
    return site;
  }

  /** Innermost first; empty for NO_SITE. */
  frames(site: number): Frame[] {
    return this.frameLists[site]!;
  }
}

export interface SiteGroup {
  bytes: number;
  count: number;
  /** Innermost first, as in the snapshot; filtered to user code unless full stacks. */
  frames: Frame[];
}

/** Counts and bytes per site of the given allocations, largest first. */
export function groupBySite(
  sites: Sites,
  stackOf: Int32Array,
  sizeOf: Float64Array,
  ids: ArrayLike<number>,
): SiteGroup[] {
  const bytes = new Float64Array(sites.count + ids.length);
  const count = new Int32Array(bytes.length);
  const seen: number[] = [];
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    const site = sites.of(stackOf[id]!);
    if (count[site] === 0) seen.push(site);
    count[site]!++;
    bytes[site]! += sizeOf[id]!;
  }
  return seen
    .map((site) => ({ bytes: bytes[site]!, count: count[site]!, frames: sites.frames(site) }))
    .sort((x, y) => y.bytes - x.bytes || y.count - x.count);
}
