import { createContext, useContext } from 'react';
import { inProducerWords } from '../../../src/engine/analyses/producer/index.js';
import type { Producer } from '../../../src/engine/model/index.js';

/**
 * The open file's producer, for the page's own sentences (labels, hints, titles): a torch_npu file
 * hears the NPU's words, as the worker's answers and the CLI give them (producer/wording.ts).
 */
const ProducerContext = createContext<Producer>({ kind: 'pytorch', signals: [] });

export const ProducerWords = ProducerContext.Provider;

/** `words(text)`: the sentence in the open file's producer's words. */
export function useWords(): (text: string) => string {
  const p = useContext(ProducerContext);
  return (text) => inProducerWords(text, p);
}
