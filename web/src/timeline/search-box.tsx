import { useEffect, useState } from 'react';
import { formatCount } from '../format.js';
import type { EngineClient } from '../worker/client.js';

interface Props {
  client: EngineClient;
  device: number;
  /** The applied search (in the URL), '' = none. */
  term: string;
  onTerm: (term: string) => void;
  onMatches: (matches: Uint8Array | null) => void;
}

/**
 * Timeline search by address (0x… or decimal: the allocations containing it) or by stack-frame
 * text. The worker answers with the matching allocation ids; the timeline washes them yellow.
 */
export function SearchBox({ client, device, term, onTerm, onMatches }: Props) {
  const [found, setFound] = useState<number | null>(null);
  useEffect(() => {
    if (term === '') {
      setFound(null);
      onMatches(null);
      return;
    }
    let live = true;
    client.query('search', { device, term }).then(({ ids }) => {
      if (!live) return;
      setFound(ids.length);
      onMatches(flags(ids));
    });
    return () => {
      live = false;
    };
  }, [client, device, term, onMatches]);
  return (
    <label className="search">
      search{' '}
      <input
        key={term}
        type="search"
        aria-label="search allocations by address or frame"
        placeholder="0x7f… or frame text"
        defaultValue={term}
        onKeyDown={(e) => e.key === 'Enter' && onTerm(e.currentTarget.value.trim())}
      />{' '}
      <output className="search-result" data-count={found ?? ''}>
        {found === null
          ? ''
          : found === 0
            ? 'no allocation matches'
            : `${formatCount(found)} allocations match`}
      </output>
    </label>
  );
}

function flags(ids: Int32Array): Uint8Array {
  let max = -1;
  for (const id of ids) max = Math.max(max, id);
  const f = new Uint8Array(max + 1);
  for (const id of ids) f[id] = 1;
  return f;
}
