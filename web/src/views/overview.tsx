import type {
  DeviceSummary,
  SnapshotSummary,
  SummaryRow,
} from '../../../src/engine/analyses/summary/index.js';
import { formatDuration } from '../../../src/engine/base/index.js';
import { exactBytes, formatBytes, formatCount } from '../format.js';
import type { EngineClient } from '../worker/client.js';
import { useQuery } from './analyses/use-query.js';

/** The memory_summary() table of one device, the allocator settings, trace facts and warnings. */
export function Overview({ client, device }: { client: EngineClient; device: number }) {
  const answer = useQuery(client, 'summary', {});
  if (answer.status === 'loading') return <p className="hint">computing the summary…</p>;
  if (answer.status === 'error') return <p className="error">{answer.message}</p>;
  return <SummaryOf summary={answer.value} device={device} />;
}

function SummaryOf({ summary, device }: { summary: SnapshotSummary; device: number }) {
  const d = summary.devices.find((x) => x.device === device);
  if (d === undefined) return null;
  return (
    <main className="overview" aria-label="overview">
      <section>
        <h2>memory_summary, {d.label}</h2>
        <SummaryTable rows={d.memory_summary} />
        <ul className="notes">
          {d.notes.map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      </section>
      <section>
        <h2>Warnings</h2>
        {[...summary.warnings, ...d.warnings].length === 0 ? (
          <p>none</p>
        ) : (
          <ul className="warnings">
            {[...summary.warnings, ...d.warnings].map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        )}
      </section>
      <section>
        <h2>Trace</h2>
        <TraceFacts d={d} annotations={summary.annotations} />
      </section>
      {/* The settings explain the answer above; below it, across the page, never beside it. */}
      <section className="settings-section" style={{ gridColumn: '1 / -1' }}>
        <h2>Allocator settings</h2>
        {summary.allocator_settings === null ? (
          <p>
            {summary.producer.kind === 'torch_npu'
              ? 'not written (torch_npu writes none)'
              : 'not recorded (PyTorch older than 2.3, or a bare segment list)'}
          </p>
        ) : (
          <pre className="settings">{JSON.stringify(summary.allocator_settings, bigintAsText, 2)}</pre>
        )}
        <p>
          layout: {summary.layout}, pickle protocol {summary.pickle_protocol ?? '—'}
        </p>
        <ProducerFacts producer={summary.producer} />
      </section>
    </main>
  );
}

/** Who wrote the file and what told, as `memlens summary` says it: the reader can weigh a guess. */
function ProducerFacts({ producer }: { producer: SnapshotSummary['producer'] }) {
  if (producer.kind !== 'torch_npu') return null;
  return (
    <p className="producer">
      producer: torch_npu (Ascend NPU), from {producer.signals.join('; ')}
      {producer.pad && (
        <>
          <br />
          request pad: {producer.pad.bytes} B ({producer.pad.from})
        </>
      )}
    </p>
  );
}

function SummaryTable({ rows }: { rows: SummaryRow[] }) {
  return (
    <table className="summary">
      <thead>
        <tr>
          <th>Metric</th>
          <th>Pool</th>
          <th>Cur Usage</th>
          <th>Peak Usage</th>
          <th>Tot Alloc</th>
          <th>Tot Freed</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={`${r.metric}/${r.pool}`} className={r.pool === 'all' ? 'first' : undefined}>
            <td>{r.pool === 'all' ? r.metric : ''}</td>
            <td>{r.pool}</td>
            <Cell row={r} v={r.current} />
            <Cell row={r} v={r.peak} />
            <Cell row={r} v={r.allocated_total} />
            <Cell row={r} v={r.freed_total} />
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Cell({ row, v }: { row: SummaryRow; v: number | null }) {
  if (v === null) return <td className="num unknown">—</td>;
  if (row.unit === 'count') return <td className="num">{formatCount(v)}</td>;
  return (
    <td className="num" title={exactBytes(v)}>
      {formatBytes(v)}
    </td>
  );
}

function TraceFacts({ d, annotations }: { d: DeviceSummary; annotations: number }) {
  const facts: [string, string][] = [
    ['entries', formatCount(d.trace_entries)],
    ...Object.entries(d.trace_actions).map(([a, n]): [string, string] => [`  ${a}`, formatCount(n)]),
    ['time span', d.trace_first_time_us === null ? 'no time_us' : formatDuration(d.trace_span_us)],
    ['streams', d.streams.join(', ') || '—'],
    ['private pools', d.private_pools.join(', ') || 'none'],
    ['ooms', formatCount(d.ooms)],
    ['annotations', formatCount(annotations)],
    ['segments at dump', `${formatCount(d.segments)} (${formatCount(d.expandable_segments)} expandable)`],
    ['peak allocated in window', formatBytes(d.trace_peak_allocated_bytes)],
    ['peak reserved in window', formatBytes(d.trace_peak_reserved_bytes)],
  ];
  return (
    <table className="facts">
      <tbody>
        {facts.map(([k, v]) => (
          <tr key={k}>
            <th>{k}</th>
            <td>{v}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function bigintAsText(_key: string, v: unknown): unknown {
  return typeof v === 'bigint' ? v.toString() : v;
}
