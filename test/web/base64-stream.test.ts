import { describe, expect, it } from 'vitest';
import { base64Decoder } from '../../web/src/base64-stream.js';
import { rng } from '../helpers/rng.js';

/** The report page's embedded text, decoded in the worker as it streams: any chunking, any length. */
async function decode(text: string, cut: (i: number) => number): Promise<Uint8Array> {
  const chunks: string[] = [];
  for (let at = 0, i = 0; at < text.length; i++) {
    const n = Math.max(1, cut(i));
    chunks.push(text.slice(at, at + n));
    at += n;
  }
  const source = new ReadableStream<string>({
    start(c) {
      for (const chunk of chunks) c.enqueue(chunk);
      c.close();
    },
  });
  return new Uint8Array(await new Response(source.pipeThrough(base64Decoder())).arrayBuffer());
}

describe('base64Decoder', () => {
  it('gives back the bytes, whatever the chunks and the padding', async () => {
    const rnd = rng(7);
    for (const length of [0, 1, 2, 3, 4, 5, 100, 4099]) {
      const bytes = Uint8Array.from({ length }, () => rnd(256));
      const text = Buffer.from(bytes).toString('base64');
      for (const size of [1, 3, 4, 7, 1000]) {
        expect(await decode(text, () => size), `${length} bytes in chunks of ${size}`).toEqual(bytes);
      }
      expect(await decode(text, () => rnd(9))).toEqual(bytes);
    }
  });

  it('parts written one after another read as one (each part whole base64, no padding between)', async () => {
    const bytes = Uint8Array.from({ length: 3 * 50 + 2 }, (_, i) => (i * 37) & 255);
    const text = [bytes.subarray(0, 75), bytes.subarray(75, 150), bytes.subarray(150)]
      .map((p) => Buffer.from(p).toString('base64'))
      .join('\n');
    expect(await decode(text, () => 16)).toEqual(bytes);
  });

  it('refuses text that is not base64', async () => {
    await expect(decode('AAA*', () => 4)).rejects.toThrow(/not base64/);
    await expect(decode('AAA\u0100', () => 4)).rejects.toThrow(/not base64/);
  });
});
