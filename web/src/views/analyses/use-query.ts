import { useEffect, useState } from 'react';
import type { EngineClient } from '../../worker/client.js';
import type { Queries, QueryName } from '../../worker/protocol.js';

export type Answer<T> =
  | { status: 'loading' }
  | { status: 'ready'; value: T }
  | { status: 'error'; message: string };

/** One worker query, asked again when its arguments change; an older answer never overwrites a newer one. */
export function useQuery<K extends QueryName>(
  client: EngineClient,
  query: K,
  args: Queries[K]['args'],
): Answer<Queries[K]['result']> {
  const [answer, setAnswer] = useState<Answer<Queries[K]['result']>>({ status: 'loading' });
  const key = JSON.stringify(args);
  // biome-ignore lint/correctness/useExhaustiveDependencies: the key stands for args
  useEffect(() => {
    let live = true;
    setAnswer({ status: 'loading' });
    client.query(query, args).then(
      (value) => live && setAnswer({ status: 'ready', value }),
      (e: Error) => live && setAnswer({ status: 'error', message: e.message }),
    );
    return () => {
      live = false;
    };
  }, [client, query, key]);
  return answer;
}
