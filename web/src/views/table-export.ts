import type { EngineClient } from '../worker/client.js';
import type { TableKind } from '../worker/table-protocol.js';

export type ExportMode = 'download' | 'copy';

/**
 * The filtered rows as the CLI's CSV (the worker writes it with the CLI's writer), saved as a
 * file or copied to the clipboard.
 */
export async function exportCsv(
  client: EngineClient,
  device: number,
  kind: TableKind,
  version: number,
  mode: ExportMode,
): Promise<void> {
  const chunks = await client.query('tableCsv', { device, kind, version });
  const blob = new Blob(chunks, { type: 'text/csv' });
  if (mode === 'copy') {
    await navigator.clipboard.writeText(await blob.text());
    return;
  }
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `${kind}-cuda${device}.csv`;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}
