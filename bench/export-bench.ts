/**
 * `memlens export --format parquet` and `memlens sql` on the synthetic 1 GB snapshot. Targets
 * (issue 15): the export within 2x the summary's time, its files at most 0.3x the pickle's size,
 * and a group-by over the exported events under a second. Summary and export run RUNS times in
 * turn (the machine is shared: best and median say more than one run); the Perfetto trace once.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedSnapshot } from './cached-snapshot.js';
import { measureCli } from './run-bench.js';

type Measured = ReturnType<typeof measureCli> & { cpuMs?: number };

const RUNS = 3;

const GROUP_BY =
  'SELECT action, count(*) AS n, sum(size) AS bytes FROM events GROUP BY action ORDER BY n DESC';

function diskBytes(dir: string): number {
  return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
}

export function benchExport(size: string): void {
  const file = cachedSnapshot(size);
  const pickle = statSync(file).size;
  const work = mkdtempSync(join(tmpdir(), 'memlens-bench-export-'));
  const env = { ...process.env, XDG_CACHE_HOME: join(work, 'cache') };
  try {
    const out = join(work, 'parquet');
    const summaries: Measured[] = [];
    const exports: Measured[] = [];
    for (let i = 0; i < RUNS; i++) {
      summaries.push(measureCli(['summary', file], env));
      rmSync(out, { recursive: true, force: true });
      exports.push(measureCli(['export', file, '-o', out], env));
    }
    const onDisk = diskBytes(out);
    const sql: Measured = measureCli(['sql', GROUP_BY, out], env);
    const trace = join(work, 'trace.json.gz');
    const perfetto: Measured = measureCli(['export', file, '--format', 'perfetto', '-o', trace], env);
    const s = (m: Measured) => `${(m.ms / 1000).toFixed(2)} s`;
    const cpu = (m: Measured) => (m.cpuMs === undefined ? '' : `${(m.cpuMs / 1000).toFixed(2)} s`);
    const gb = (b: number) => `${(b / 1e9).toFixed(2)} GB`;
    const byWall = (list: Measured[]) => [...list].sort((a, b) => a.ms - b.ms);
    const [summary, exported] = [byWall(summaries)[0]!, byWall(exports)[0]!];
    const median = (list: Measured[]) => byWall(list)[Math.floor(list.length / 2)]!;
    const walls = (list: Measured[]) => list.map(s).join(' / ');
    console.log(`\n### memlens export / sql: synthetic ${size} (${(pickle / 1e6).toFixed(0)} MB pickle)\n`);
    console.log(
      `Best of ${RUNS} (walls in run order: summary ${walls(summaries)}; export ${walls(exports)})\n`,
    );
    console.log('| what | wall | CPU (all threads) | peak RSS | on disk | exit |');
    console.log('|---|---|---|---|---|---|');
    console.log(
      `| summary | ${s(summary)} | ${cpu(summary)} | ${gb(summary.maxRssBytes)} | | ${summary.exitCode} |`,
    );
    console.log(
      `| export --format parquet | ${s(exported)} | ${cpu(exported)} | ${gb(exported.maxRssBytes)} | ${(onDisk / 1e6).toFixed(1)} MB | ${exported.exitCode} |`,
    );
    console.log(
      `| sql (group-by over events) | ${s(sql)} | ${cpu(sql)} | ${gb(sql.maxRssBytes)} | | ${sql.exitCode} |`,
    );
    console.log(
      `| export --format perfetto (.json.gz) | ${s(perfetto)} | ${cpu(perfetto)} | ${gb(perfetto.maxRssBytes)} | ${(statSync(trace).size / 1e6).toFixed(2)} MB | ${perfetto.exitCode} |`,
    );
    console.log(
      `\nexport / summary: ${(exported.ms / summary.ms).toFixed(2)}x wall best, ${(median(exports).ms / median(summaries).ms).toFixed(2)}x median (target <= 2x); Parquet / pickle: ${(onDisk / pickle).toFixed(3)}x (target <= 0.3x); sql ${s(sql)} (target < 1 s)`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
