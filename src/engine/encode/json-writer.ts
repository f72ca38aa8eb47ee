/**
 * Streaming JSON for the same value model as the pickle writer (PyTorch's viewer also accepts a
 * snapshot as JSON). Shared objects are written out in full each time: JSON has no references.
 * Tuples become arrays, bytes are refused, floats keep a fractional part as Python's json does.
 */
import { PyFloat, PyTuple, type PyValue, Shared, StreamedList } from './pickle-values.js';

export type JsonSink = (chunk: Uint8Array) => void;

export function writeJson(value: PyValue, sink: JsonSink, chunkSize = 1 << 20): void {
  const w = new JsonWriter(sink, chunkSize);
  w.value(value);
  w.flush();
}

class JsonWriter {
  private parts: string[] = [];
  private pending = 0;
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly sink: JsonSink,
    private readonly chunkSize: number,
  ) {}

  flush(): void {
    if (this.parts.length === 0) return;
    this.sink(this.encoder.encode(this.parts.join('')));
    this.parts = [];
    this.pending = 0;
  }

  private put(s: string): void {
    this.parts.push(s);
    this.pending += s.length;
    if (this.pending >= this.chunkSize) this.flush();
  }

  value(v: PyValue): void {
    switch (typeof v) {
      case 'string':
        this.put(JSON.stringify(v));
        return;
      case 'number':
        this.put(Number.isInteger(v) ? String(v) : floatText(v));
        return;
      case 'bigint':
        this.put(v.toString());
        return;
      case 'boolean':
        this.put(v ? 'true' : 'false');
        return;
      case 'object':
        this.object(v);
        return;
      default:
        throw new TypeError(`cannot write a value of type ${typeof v} as JSON`);
    }
  }

  private object(v: Exclude<PyValue, string | number | bigint | boolean>): void {
    if (v === null) this.put('null');
    else if (v instanceof Shared) this.value(v.value);
    else if (v instanceof PyFloat) this.put(floatText(v.value, true));
    else if (v instanceof PyTuple || v instanceof StreamedList) this.array(v.items);
    else if (Array.isArray(v)) this.array(v as readonly PyValue[]);
    else if (v instanceof Uint8Array) throw new TypeError('bytes have no JSON form');
    else this.dict(v instanceof Map ? v.entries() : Object.entries(v as Record<string, PyValue>).values());
  }

  private dict(entries: Iterable<[PyValue, PyValue]>): void {
    this.put('{');
    let first = true;
    for (const [k, x] of entries) {
      if (typeof k !== 'string' && typeof k !== 'number') throw new TypeError('JSON keys must be strings');
      this.put(first ? JSON.stringify(String(k)) : `,${JSON.stringify(String(k))}`);
      this.put(':');
      this.value(x);
      first = false;
    }
    this.put('}');
  }

  private array(items: Iterable<PyValue>): void {
    this.put('[');
    let first = true;
    for (const x of items) {
      if (!first) this.put(',');
      this.value(x);
      first = false;
    }
    this.put(']');
  }
}

function floatText(x: number, forceFraction = false): string {
  if (!Number.isFinite(x)) throw new RangeError('NaN and Infinity have no JSON form');
  const s = String(x);
  return forceFraction && /^-?\d+$/.test(s) ? `${s}.0` : s;
}
