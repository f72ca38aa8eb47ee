import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';

/** The machine a benchmark ran on, for the results table: CPUs, memory, Node, date. */
export function machineLine(): string {
  const cpu = cpus();
  return `machine: ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}`;
}

/** `uptime`'s load averages: the machine is shared, so figures are read against its load. */
export function loadLine(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return `load average: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')}`;
  }
}
