/**
 * Runs the query for the latest key only, one at a time: while one runs, newer requests (a wheel
 * spin, a drag) only replace the pending one, so the worker never works through a backlog of
 * windows nobody looks at any more. An answer is applied only when no newer request waits.
 */
export function latestQuery<T>(apply: (t: T, key: string) => void, failed?: () => void) {
  let busy = false;
  let wanted: string | null = null;
  let pending: { key: string; run: () => Promise<T> } | null = null;
  const next = (): void => {
    if (pending === null) return;
    const { key, run } = pending;
    pending = null;
    busy = true;
    run().then(
      (t) => {
        busy = false;
        if (pending === null) apply(t, key);
        next();
      },
      () => {
        busy = false;
        failed?.();
        next();
      },
    );
  };
  return (key: string, run: () => Promise<T>): void => {
    if (key === wanted) return;
    wanted = key;
    pending = { key, run };
    if (!busy) next();
  };
}
