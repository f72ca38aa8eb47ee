import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream';
import type { CycleService } from './cycle-service.js';
import { openServed } from './open-served.js';
import type { RunService } from './run-service.js';
import type { ServedFile } from './snapshot-files.js';
import { appFile } from './static-files.js';

/**
 * The local server behind `memlens view`: the built app, the list of snapshot files, and those
 * files' bytes, on 127.0.0.1 only. Nothing else on disk is reachable: files are addressed by
 * their index in the list, never by path.
 */
export interface ViewServer {
  server: Server;
  url: string;
}

/** The page may talk to this server and to blob: workers, nothing else. */
const CSP = [
  "default-src 'self'",
  // wasm-unsafe-eval lets the engine compile its WebAssembly entry scanner (no JS eval).
  "script-src 'self' blob: 'wasm-unsafe-eval'",
  "worker-src 'self' blob: data:",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
].join('; ');

/**
 * `run`: the run of `memlens view DIR` (GET api/run); files is then its append-only list.
 * `cycles`: that run's recorded cycles (GET api/cycles; none without a run).
 */
export async function startServer(
  files: ServedFile[],
  appRoot: string,
  port = 0,
  run?: RunService,
  cycles?: CycleService,
): Promise<ViewServer> {
  const server = createServer((req, res) => {
    handle(req, res, files, appRoot, run, cycles).catch(() => send(res, 500, 'internal error'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${bound}/` };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  files: ServedFile[],
  appRoot: string,
  run: RunService | undefined,
  cycles: CycleService | undefined,
): Promise<void> {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  if (!isLocalHost(req.headers.host)) return send(res, 403, 'forbidden host');
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'method not allowed');
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const path = url.pathname;
  if (path === '/api/files') return sendJson(res, fileList(files));
  if (path === '/api/run') {
    if (run === undefined) return send(res, 404, 'no run: memlens view was given files, not a directory');
    const since = url.searchParams.get('since');
    return sendJson(res, run.state(since === null ? undefined : Number(since)));
  }
  if (path === '/api/cycles')
    return sendJson(res, cycles === undefined ? { cycles: [] } : await cycles.state());
  const m = /^\/files\/(\d+)$/.exec(path);
  if (m) return sendSnapshot(req, res, files[Number(m[1])]);
  const asset = await appFile(appRoot, path);
  if (asset === null) return send(res, 404, 'not found');
  res.writeHead(200, {
    'Content-Type': asset.type,
    'Content-Length': asset.body.length,
    'Cache-Control': 'no-cache',
  });
  res.end(req.method === 'HEAD' ? undefined : asset.body);
}

/** Refuses requests made to another host name that resolves here (DNS rebinding). */
function isLocalHost(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.replace(/:\d+$/, '');
  return name === '127.0.0.1' || name === 'localhost' || name === '[::1]';
}

function fileList(files: ServedFile[]) {
  return { files: files.map((f, i) => ({ name: f.name, label: f.label, size: f.size, url: `files/${i}` })) };
}

async function sendSnapshot(
  req: IncomingMessage,
  res: ServerResponse,
  file: ServedFile | undefined,
): Promise<void> {
  if (file === undefined) return send(res, 404, 'not found');
  const opened = await openServed(file);
  if ('status' in opened) return send(res, opened.status, opened.message);
  // The bytes there now, read from the descriptor that was checked: a file that grew or shrank
  // since it was listed is served whole, with its size now.
  res.writeHead(200, {
    'Content-Type': 'application/octet-stream',
    'Content-Length': opened.size,
    'Cache-Control': 'no-store',
  });
  if (req.method === 'HEAD' || opened.size === 0) {
    await opened.handle.close();
    res.end();
    return;
  }
  // pipeline, not pipe: when the client goes away mid-body (a reload during decode, a closed tab)
  // pipe() only unpipes and the read stream keeps its descriptor open for the life of the server.
  // pipeline destroys both ends however the response ends: finished, aborted, or a read error.
  // Reads of 1 MiB, not the default 64 KiB: a 1 GB trace in ~950 chunks instead of ~15,000, and
  // the server's work per chunk (a read, the generator below, a socket write) is what the page's
  // fetch waits on (the CPU of a loaded machine is shared with the decoding browser).
  const body = opened.handle.createReadStream({ start: 0, end: opened.size - 1, highWaterMark: 1 << 20 });
  pipeline(body, exactly(opened.size), res, () => {});
}

/** Passes the body on, and fails it (an aborted transfer, never a short one) if it ends early. */
function exactly(size: number) {
  return async function* (chunks: AsyncIterable<Buffer>) {
    let sent = 0;
    for await (const chunk of chunks) {
      sent += chunk.length;
      yield chunk;
    }
    if (sent !== size) throw new Error(`file shrank while served: ${sent} of ${size} bytes`);
  };
}

function sendJson(res: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(text);
}

function send(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(text);
}
