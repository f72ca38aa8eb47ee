import type { ReactNode } from 'react';
import type { Answer } from './use-query.js';

/**
 * What an analysis form shows under it: why its input is refused (nothing runs then), else its
 * answer's state: computing, the engine's one-line refusal, or the result.
 */
export function FormAnswer<T>(p: {
  problem: string | null;
  answer: Answer<T>;
  /** "simulating…", "judging…". */
  busy: string;
  children: (value: T) => ReactNode;
}) {
  const { problem, answer } = p;
  return (
    <>
      {problem !== null && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      {answer.status === 'loading' && <p className="hint">{p.busy}</p>}
      {answer.status === 'error' && (
        <p className="error" role="alert">
          {answer.message}
        </p>
      )}
      {answer.status === 'ready' && p.children(answer.value)}
    </>
  );
}
