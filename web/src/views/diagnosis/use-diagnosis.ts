import { useEffect, useState } from 'react';
import type { DiagnosisSoFar } from '../../../../src/engine/analyses/diagnosis/index.js';
import type { EngineClient } from '../../worker/client.js';
import type { Queries } from '../../worker/protocol.js';
import type { Answer } from '../analyses/use-query.js';

type DiagnosisArgs = Queries['diagnosis']['args'];

/**
 * The diagnosis as it grows: 'ready' from the first findings the worker sends (its `pending`
 * names what is still being looked at) to the last; asked again when the arguments change, and
 * an answer to older arguments is never shown. null arguments: not asked.
 */
export function useDiagnosis(client: EngineClient, args: DiagnosisArgs | null): Answer<DiagnosisSoFar> {
  const key = args === null ? null : JSON.stringify(args);
  const [heard, setHeard] = useState<{ key: string | null; answer: Answer<DiagnosisSoFar> }>({
    key: null,
    answer: { status: 'loading' },
  });
  // biome-ignore lint/correctness/useExhaustiveDependencies: the key stands for args
  useEffect(() => {
    if (args === null) return;
    let live = true;
    const hear = (answer: Answer<DiagnosisSoFar>) => live && setHeard({ key, answer });
    client
      .query('diagnosis', args, undefined, (value) => hear({ status: 'ready', value }))
      .then(
        (value) => hear({ status: 'ready', value }),
        (e: Error) => hear({ status: 'error', message: e.message }),
      );
    return () => {
      live = false;
    };
  }, [client, key]);
  return heard.key === key && key !== null ? heard.answer : { status: 'loading' };
}
