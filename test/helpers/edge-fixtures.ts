/** Access to the golden pickle fixtures in fixtures/edge (made by fixtures/edge/make_edge.py). */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const EDGE_DIR = fileURLToPath(new URL('../../fixtures/edge/', import.meta.url));

/** Every plain-data case exists as <case>_p<N>.pickle for each of these protocols. */
export const EDGE_PROTOCOLS = [0, 1, 2, 3, 4, 5] as const;

export interface HostileFixture {
  protocol: number;
  /** [module, name] pairs in the order find_class saw them */
  globals: [string, string][];
  /** [module, name, canonical args] for each REDUCE of a global */
  calls: [string, string, unknown[]][];
  /** canonical persistent ids, in load order (torch_like_persid* only) */
  persistent_ids?: unknown[];
  /** the canonical value with each persistent object written as {"persistent_id": <canonical pid>} */
  value_with_persistent_ids?: unknown;
  note: string;
}

/** Names of the plain-data cases, e.g. "ints", "snapshot_like". */
export function edgeCases(): string[] {
  return readdirSync(EDGE_DIR)
    .filter((f) => f.endsWith('.expected.json'))
    .map((f) => f.slice(0, -'.expected.json'.length))
    .sort();
}

export function readEdgeExpected(name: string): unknown {
  return JSON.parse(readFileSync(`${EDGE_DIR}${name}.expected.json`, 'utf8'));
}

export function readEdgePickle(name: string, protocol: number): Uint8Array {
  return new Uint8Array(readFileSync(`${EDGE_DIR}${name}_p${protocol}.pickle`));
}

/** hostile.json: file name (e.g. "evil_reduce.pickle") -> what the file contains. */
export function readHostile(): Record<string, HostileFixture> {
  return JSON.parse(readFileSync(`${EDGE_DIR}hostile.json`, 'utf8')) as Record<string, HostileFixture>;
}

export function readEdgeFile(fileName: string): Uint8Array {
  return new Uint8Array(readFileSync(`${EDGE_DIR}${fileName}`));
}
