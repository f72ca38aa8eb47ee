import { useCallback, useEffect, useRef, useState } from 'react';
import { latestQuery } from '../timeline/latest-query.js';
import type { TimelineStack } from '../url-state.js';
import type { EngineClient } from '../worker/client.js';
import type { Selected } from '../worker/protocol.js';

/** What a selected entry and allocation show, and the selection it answers. */
export interface SelectionView extends Selected {
  key: { entry: number; alloc: number | null; stream: number | null; stack: TimelineStack };
  /** The entry the pool state is for (it is asked for only when the entry changes). */
  poolEntry: number | null;
}

/**
 * The selected entry and pinned allocation, answered in one worker round trip (`select`): the
 * entry line, the allocation's details and the pool state, or for a click on the timeline also
 * which allocation lies under the pointer. The details' offset is in the stack the timeline draws
 * (`stack`), so the pinned allocation is outlined where that stack has it. The latest selection
 * wins: holding an arrow key skips the entries the worker had no time for instead of queueing them.
 */
export function useSelection(
  client: EngineClient,
  device: number,
  want: {
    entry: number;
    alloc: number | null;
    stream: number | null;
    stack: TimelineStack;
    enabled: boolean;
  },
  onPicked: (entry: number, alloc: number | null) => void,
): { shown: SelectionView | null; pick: (entry: number, bytes: number) => void } {
  const [shown, setShown] = useState<SelectionView | null>(null);
  const latest = useRef(shown);
  latest.current = shown;
  const picked = useRef(onPicked);
  picked.current = onPicked;
  const [ask] = useState(() =>
    latestQuery<{
      answer: Selected;
      entry: number;
      stream: number | null;
      stack: TimelineStack;
      pool: boolean;
      pick: boolean;
    }>(({ answer, entry, stream, stack, pool, pick }) => {
      const before = latest.current;
      const next: SelectionView = {
        ...answer,
        // Only asked for when the entry changed: otherwise the one on show is still right.
        pool: pool ? answer.pool : (before?.pool ?? null),
        poolEntry: pool ? entry : (before?.poolEntry ?? null),
        key: { entry, alloc: answer.alloc, stream, stack },
      };
      latest.current = next;
      setShown(next);
      if (pick) picked.current(entry, answer.alloc);
    }),
  );
  const run = useCallback(
    (
      entry: number,
      alloc: number | null,
      stream: number | null,
      stack: TimelineStack,
      bytes: number | null,
    ) => {
      const pool = latest.current?.poolEntry !== entry;
      const args = { device, entry, alloc, stream, stack, pool, pick: bytes === null ? null : { bytes } };
      ask(JSON.stringify(args), () =>
        client
          .query('select', args)
          .then((answer) => ({ answer, entry, stream, stack, pool, pick: bytes !== null })),
      );
    },
    [client, device, ask],
  );
  const { entry, alloc, stream, stack, enabled } = want;
  useEffect(() => {
    const k = latest.current?.key;
    const same = k && k.entry === entry && k.alloc === alloc && k.stream === stream && k.stack === stack;
    if (!enabled || same) return;
    run(entry, alloc, stream, stack, null);
  }, [run, entry, alloc, stream, stack, enabled]);
  const pick = useCallback(
    (k: number, bytes: number) => run(k, null, stream, stack, bytes),
    [run, stream, stack],
  );
  return { shown, pick };
}
