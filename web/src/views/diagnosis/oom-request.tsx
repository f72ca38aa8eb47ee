import type { EngineClient } from '../../worker/client.js';
import { Frames } from '../analyses/bits.js';
import { useQuery } from '../analyses/use-query.js';
import { commandName } from './diagnosis-page.js';

/**
 * In the details pane when the selected entry is an OOM (an OOM entry opens no allocation to pin):
 * its verdict and the failing request's stack, from the finding the Diagnosis tab shows for it
 * (a repeated OOM's group, whichever of its entries is selected).
 */
export function OomRequest({
  client,
  device,
  file,
  entry,
}: {
  client: EngineClient;
  device: number;
  file: string;
  entry: number;
}) {
  const answer = useQuery(client, 'diagnosis', { file: commandName(file) });
  const oom =
    answer.status === 'ready'
      ? answer.value.devices
          .find((d) => d.device === device)
          ?.findings.find((f) => f.kind === 'oom' && (f.entries ?? []).includes(entry))
      : undefined;
  return (
    <aside className="details oom-request" aria-label="failing request">
      <h3>Failing request</h3>
      {oom === undefined ? (
        <p className="hint">the request of this oom entry (memlens oom lists every oom)</p>
      ) : (
        <>
          <p className="verdict">{oom.headline}</p>
          <h4>Stack (your code first, innermost first)</h4>
          <Frames frames={oom.frames.map((f) => ({ ...f, extra: undefined }))} shown={12} />
        </>
      )}
    </aside>
  );
}
