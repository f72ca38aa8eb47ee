#!/usr/bin/env python3
"""Figures of a PyTorch memory snapshot, per device, with the definitions of shared/corpus/README.md.

Usage: python3 scripts/expected_figures.py SNAPSHOT [--compare EXPECTED.json]
Reads .pickle (plain or gzip) or .json. Prints {"devices": [...], "file": name} as JSON, or with
--compare, the differences against EXPECTED.json (exit status 1 if any).
Independent of memlens on purpose: it is the reference the TypeScript code is checked against.
"""

import collections
import gzip
import json
import os
import pickle
import sys

ACTIVE = ('active_allocated', 'active_pending_free')


def load(path):
    with open(path, 'rb') as f:
        data = f.read()
    if data[:2] == b'\x1f\x8b':
        data = gzip.decompress(data)
    if data[:1] == b'\x80':
        return pickle.loads(data)
    return json.loads(data.decode('utf-8'))


def segment_figures(segs):
    blocks = [b for s in segs for b in s['blocks']]
    active = [b for b in blocks if b['state'] in ACTIVE]
    inactive = [b for b in blocks if b['state'] == 'inactive']
    split_inactive = [
        b for s in segs if not s.get('is_expandable', False) and len(s['blocks']) > 1
        for b in s['blocks'] if b['state'] == 'inactive'
    ]
    pools = collections.defaultdict(lambda: {'segments': 0, 'reserved_bytes': 0})
    for s in segs:
        pools[s['segment_type']]['segments'] += 1
        pools[s['segment_type']]['reserved_bytes'] += s['total_size']
    return {
        'segments': len(segs),
        'expandable_segments': sum(1 for s in segs if s.get('is_expandable', False)),
        'blocks': len(blocks),
        'pools': dict(sorted(pools.items())),
        'reserved_bytes': sum(s['total_size'] for s in segs),
        'allocated_bytes': sum(b['size'] for b in active if b['state'] == 'active_allocated'),
        'active_bytes': sum(b['size'] for b in active),
        'requested_bytes': sum(b.get('requested_size', 0) for b in active),
        'inactive_split_bytes': sum(b['size'] for b in split_inactive),
        'largest_inactive_block': max((b['size'] for b in inactive), default=0),
    }


def trace_figures(trace, segs):
    """Curves rebuilt backwards from the final state, as the README defines them."""
    allocated = sum(b.get('requested_size', 0) for s in segs for b in s['blocks'] if b['state'] == 'active_allocated')
    reserved = sum(s['total_size'] for s in segs)
    peak_alloc, peak_res = allocated, reserved
    for e in reversed(trace):
        a = e['action']
        if a == 'alloc':
            allocated -= e['size']
        elif a == 'free_requested':
            allocated += e['size']
        elif a in ('segment_alloc', 'segment_map'):
            reserved -= e['size']
        elif a in ('segment_free', 'segment_unmap'):
            reserved += e['size']
        peak_alloc = max(peak_alloc, allocated)
        peak_res = max(peak_res, reserved)
    times = [e['time_us'] for e in trace if 'time_us' in e]
    actions = collections.Counter(e['action'] for e in trace)
    return {
        'trace_entries': len(trace),
        'trace_actions': dict(sorted(actions.items())),
        'ooms': actions.get('oom', 0),
        'trace_span_us': times[-1] - times[0] if times else 0,
        'trace_start_allocated_bytes': allocated,
        'trace_peak_allocated_bytes': peak_alloc,
        'trace_start_reserved_bytes': reserved,
        'trace_peak_reserved_bytes': peak_res,
    }


def figures(snapshot, name):
    if isinstance(snapshot, list):
        snapshot = {'segments': snapshot, 'device_traces': []}
    segments = snapshot.get('segments', [])
    traces = snapshot.get('device_traces', [])
    devices = sorted({s['device'] for s in segments} | {i for i, t in enumerate(traces) if t})
    out = []
    for d in devices:
        segs = [s for s in segments if s['device'] == d]
        trace = traces[d] if d < len(traces) else []
        out.append({'device': d, **segment_figures(segs), **trace_figures(trace, segs)})
    return {'devices': out, 'file': name}


def diff(got, want, path=''):
    if isinstance(want, dict) and isinstance(got, dict):
        for k in sorted(set(got) | set(want)):
            yield from diff(got.get(k), want.get(k), f'{path}.{k}')
    elif isinstance(want, list) and isinstance(got, list) and len(got) == len(want):
        for i, (g, w) in enumerate(zip(got, want)):
            yield from diff(g, w, f'{path}[{i}]')
    elif got != want:
        yield f'{path}: got {got!r}, expected {want!r}'


def main(argv):
    if not argv or argv[0] in ('-h', '--help'):
        print(__doc__)
        return 0
    result = figures(load(argv[0]), os.path.basename(argv[0]))
    if len(argv) >= 3 and argv[1] == '--compare':
        with open(argv[2]) as f:
            want = json.load(f)
        problems = list(diff(result['devices'], want['devices'], 'devices'))
        for p in problems:
            print(p)
        return 1 if problems else 0
    json.dump(result, sys.stdout, indent=1, sort_keys=True)
    print()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
