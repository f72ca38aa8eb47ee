const CHUNKS = /(\d+)|(\D+)/g;

/** Compares names as people read them: step2 before step10, rank9 before rank10. */
export function naturalCompare(a: string, b: string): number {
  const x = a.match(CHUNKS) ?? [];
  const y = b.match(CHUNKS) ?? [];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const p = x[i]!;
    const q = y[i]!;
    const pn = /^\d/.test(p);
    const qn = /^\d/.test(q);
    if (pn && qn) {
      const d = Number(p) - Number(q);
      if (d !== 0) return d;
      if (p.length !== q.length) return p.length - q.length;
    } else if (p !== q) {
      return p < q ? -1 : 1;
    }
  }
  return x.length - y.length;
}
