/**
 * Runs the recorded command as `memlens record`'s child: the terminal is the child's (stdio
 * inherited), `kill` reaches it through memlens too, and its end is memlens's exit code.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';

export interface ChildEnd {
  /** The command's exit code, or 128 + n when signal n ended it (as a shell reports it). */
  code: number;
  /** The signal that ended it, if one did. */
  signal: NodeJS.Signals | null;
}

/** Signals passed on to the child; memlens waits for the child's own end to write the manifest. */
const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/**
 * Ctrl+C in a terminal signals the whole foreground process group, the command included: passing
 * it on too would interrupt the program a second time, perhaps in the middle of its own clean-up.
 * So at a terminal SIGINT is left to the terminal (as `uv run` does, astral-sh/uv#13925), and
 * passed on otherwise (`kill -INT` from a script or a process manager).
 */
function forwards(signal: NodeJS.Signals): boolean {
  return signal !== 'SIGINT' || process.stdin.isTTY !== true;
}

/** Shell conventions for a command that could not be started. */
const NOT_FOUND = 127;
const NOT_EXECUTABLE = 126;

export function runChild(command: string[], env: NodeJS.ProcessEnv): Promise<ChildEnd> {
  return new Promise((resolve) => {
    const child = spawn(command[0]!, command.slice(1), { stdio: 'inherit', env });
    const forward = (signal: NodeJS.Signals) => {
      if (child.exitCode === null && child.signalCode === null && forwards(signal)) child.kill(signal);
    };
    for (const s of FORWARDED) process.on(s, forward);
    let settled = false;
    const done = (end: ChildEnd) => {
      if (settled) return; // a failed start may report both 'error' and 'exit'
      settled = true;
      for (const s of FORWARDED) process.off(s, forward);
      resolve(end);
    };
    child.on('error', (e: NodeJS.ErrnoException) => {
      const why =
        e.code === 'ENOENT' ? 'command not found' : e.code === 'EACCES' ? 'permission denied' : e.message;
      process.stderr.write(`memlens record: ${command[0]}: ${why}\n`);
      done({ code: e.code === 'ENOENT' ? NOT_FOUND : NOT_EXECUTABLE, signal: null });
    });
    child.on('exit', (code, signal) => {
      if (signal !== null) done({ code: 128 + (constants.signals[signal] ?? 0), signal });
      else done({ code: code ?? 0, signal: null });
    });
  });
}
