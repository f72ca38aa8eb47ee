/**
 * The recorded cycles of the run behind `memlens view DIR` (GET api/cycles): each cycle file's
 * graph and its report (what `memlens cycles --json` prints), with the served file that is its
 * window, so the page can open that snapshot on the allocation or the GC burst. Worked out on the
 * first request and again only when the cycle files change.
 */

import fs from 'node:fs';
import path from 'node:path';
import type { CycleGraph } from '../engine/analyses/cycles/index.js';
import { cycleReport } from '../engine/analyses/cycles/index.js';
import { gatherCycleInputs, readCycleFile, WindowFinder } from '../node/cycles/cycle-inputs.js';
import type { ServedCycle } from '../wire/served-cycle.js';
import type { ServedFile } from './snapshot-files.js';

export class CycleService {
  private cached: { key: string; cycles: ServedCycle[] } | null = null;
  private busy: Promise<ServedCycle[]> | null = null;

  /** `files`: the server's list, read when asked (a watched run appends to it). */
  constructor(
    private readonly dirs: string[],
    private readonly files: ServedFile[],
  ) {}

  async state(): Promise<{ cycles: ServedCycle[] }> {
    const { cycles } = gatherCycleInputs(this.dirs);
    const key = cycles.map((c) => `${c}:${fs.statSync(c, { throwIfNoEntry: false })?.mtimeMs}`).join('|');
    if (this.cached?.key === key) return { cycles: this.cached.cycles };
    this.busy ??= this.compute().finally(() => {
      this.busy = null;
    });
    const computed = await this.busy;
    this.cached = { key, cycles: computed };
    return { cycles: computed };
  }

  private async compute(): Promise<ServedCycle[]> {
    const { cycles, run } = gatherCycleInputs(this.dirs);
    const finder = new WindowFinder(run, () => {});
    const out: ServedCycle[] = [];
    const read: { name: string; graph: CycleGraph }[] = [];
    for (const file of cycles) {
      const name = this.nameOf(file);
      try {
        read.push({ name, graph: readCycleFile(file) });
      } catch (e) {
        out.push({ name, error: (e as Error).message });
      }
    }
    read.sort((a, b) => a.graph.rank - b.graph.rank || a.graph.time_us - b.graph.time_us);
    for (const { name, graph } of read) {
      const { match, gcOf } = await finder.match(graph);
      const report = cycleReport(graph, match, gcOf);
      out.push({ name, graph, report, snapshot: match.file === null ? null : this.servedName(match.file) });
    }
    return out;
  }

  private nameOf(file: string): string {
    const dir = this.dirs.find((d) => !path.relative(d, file).startsWith('..'));
    return dir === undefined ? file : path.join(path.basename(dir), path.relative(dir, file));
  }

  private servedName(file: string): string | null {
    const real = fs.realpathSync(file);
    return this.files.find((f) => f.path === real)?.name ?? null;
  }
}
