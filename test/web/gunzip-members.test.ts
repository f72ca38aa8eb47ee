import { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { inflateInJs } from '../../web/src/worker/gunzip-members.js';

/**
 * The web app's second reading of a gzip file (gunzip-members.ts: zlib in JS, Node's rule between
 * members) against Node's own gunzip, which the CLI reads with: the same bytes, or the same error,
 * wherever the file's chunks happen to end.
 */
const text = Buffer.from(
  Array.from({ length: 30_000 }, (_, i) => `entry ${i} size ${(i * 7919) % 100_003}\n`).join(''),
);
const parts = [text.subarray(0, 200_000), text.subarray(200_000, 200_001), text.subarray(200_001)];
const gz = Buffer.concat(parts.map((p) => gzipSync(p)));
/** Where each member ends in `gz`. */
const ends = parts.map((_, i) => parts.slice(0, i + 1).reduce((n, p) => n + gzipSync(p).length, 0));

async function inJs(file: Buffer, cuts: number[]): Promise<Buffer> {
  const bounds = [0, ...cuts.filter((c) => c > 0 && c < file.length), file.length];
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i + 1 < bounds.length; i++)
        controller.enqueue(new Uint8Array(file.subarray(bounds[i], bounds[i + 1])));
      controller.close();
    },
  });
  const out: Uint8Array[] = [];
  for await (const part of inflateInJs(stream)) out.push(part.slice());
  return Buffer.concat(out);
}

function every(n: number, length: number): number[] {
  return Array.from({ length: Math.ceil(length / n) }, (_, i) => i * n);
}

describe("the web app's gzip members, read in JS", () => {
  it('every member, in chunks that end anywhere: at each member end, inside headers, byte by byte', async () => {
    expect(gunzipSync(gz)).toEqual(text);
    for (const cuts of [[], ends, ends.map((e) => e + 3), every(4096, gz.length), every(1, 3000)])
      expect((await inJs(gz, cuts)).equals(text), String(cuts.slice(0, 4))).toBe(true);
  });

  it('zero bytes after a member end the stream, whatever follows them, as in Node', async () => {
    for (const tail of [Buffer.alloc(100), Buffer.from([0, 0x1f, 0x8b, 1, 2, 3])]) {
      const file = Buffer.concat([gz, tail]);
      expect(gunzipSync(file).equals(text)).toBe(true);
      expect((await inJs(file, [gz.length])).equals(text)).toBe(true);
      expect((await inJs(file, [])).equals(text)).toBe(true);
    }
  });

  it("anything else is refused with zlib's words, as Node refuses it", async () => {
    const crc = Buffer.from(gz);
    crc[ends[0]! - 8]! ^= 1;
    for (const [file, why] of [
      [Buffer.concat([gz, Buffer.from('junk')]), 'incorrect header check'],
      [gz.subarray(0, gz.length - 5), 'unexpected end of file'],
      [gz.subarray(0, ends[0]! + 5), 'unexpected end of file'],
      [crc, 'incorrect data check'],
    ] as const) {
      expect(() => gunzipSync(file)).toThrow(why);
      await expect(inJs(file, [ends[0]!])).rejects.toThrow(why);
    }
  });
});
