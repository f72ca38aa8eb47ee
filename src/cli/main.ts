#!/usr/bin/env -S node --no-concurrent-recompilation
// The flag: Node 20 can deadlock at exit when a background TurboFan job waits for a GC while the
// main thread shuts the platform down (seen ~1 in 80 runs on a busy machine; nodejs/node#54918).
// Compiling on the main thread costs nothing measurable here. Keep NODE_FLAGS in node-flags.ts in step.
import { Command } from 'commander';
import { EXIT_BAD_INPUT, EXIT_WRITE_FAILED } from '../node/files/report-error.js';
import { VERSION } from '../node/version.js';
import { commandsFor } from './command-table.js';

endQuietlyWhenTheReaderLeaves();

const program = new Command()
  .name('memlens')
  .description(
    'Where did my GPU memory go? Reads PyTorch CUDA memory snapshots (torch.cuda.memory._dump_snapshot).',
  )
  .version(VERSION)
  .showHelpAfterError();

Promise.all(commandsFor(process.argv.slice(2)).map((c) => c.load()))
  .then((registers) => {
    for (const register of registers) register(program);
    return program.parseAsync(process.argv);
  })
  .catch((e: unknown) => {
    process.stderr.write(`memlens: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\n`);
    process.exitCode = EXIT_BAD_INPUT;
  })
  .finally(exitWhenFlushed);

/**
 * `memlens … | head` closes the pipe early: the next write fails with EPIPE, and Node reports an
 * unhandled 'error' event with a stack trace. Whatever command is writing (a report, a JSON
 * document, a streamed table), the reader has all it wanted: stop at once, quietly and with
 * success, as `yes | head` does from the reader's side. Any other failed write (a full disk,
 * /dev/full, an I/O error) lost output: one line and a failure, whichever command wrote.
 */
function endQuietlyWhenTheReaderLeaves(): void {
  process.stdout.on('error', endForStdout);
}

function endForStdout(e: NodeJS.ErrnoException): never {
  if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED') process.exit(0);
  process.stderr.write(`memlens: cannot write the output to stdout (${e.code ?? e.message})\n`);
  process.exit(EXIT_WRITE_FAILED);
}

/**
 * Exit explicitly once stdout has drained, instead of letting the event loop run dry, where
 * Node 20's NodePlatform::DrainTasks can also deadlock (nodejs/node#54918). Pipes can be
 * asynchronous: exiting with data still queued would cut the report short. A write that failed
 * is reported on the next tick: it is looked at here, or the exit would hide it.
 */
function exitWhenFlushed(): void {
  const failed = process.stdout.errored;
  if (failed) endForStdout(failed as NodeJS.ErrnoException);
  const code = Number(process.exitCode ?? 0);
  if (process.stdout.writableLength > 0) process.stdout.once('drain', exitWhenFlushed);
  else process.exit(code);
}
