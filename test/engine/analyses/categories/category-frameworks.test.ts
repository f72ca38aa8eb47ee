import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { labelAllocations, RULES } from '../../../../src/engine/analyses/categories/categories.js';
import { categoriesOf } from '../../../../src/engine/analyses/categories/category-curves.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { smallSegment } from '../../../helpers/small-segment.js';
import { snapshotOf } from '../../../helpers/snapshot-of.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');

type F = [name: string, filename: string, line: number];
const SP = '/opt/conda/lib/python3.11/site-packages';
const TORCH = `${SP}/torch`;
const USER = '/home/ann/llm';
const main: F = ['main', `${USER}/train.py`, 88];
const forward: F[] = [
  ['_call_impl', `${TORCH}/nn/modules/module.py`, 1527],
  ['_wrapped_call_impl', `${TORCH}/nn/modules/module.py`, 1518],
  ['forward', `${USER}/model.py`, 61],
];
const backward: F[] = [
  ['_engine_run_backward', `${TORCH}/autograd/graph.py`, 744],
  ['backward', `${TORCH}/autograd/__init__.py`, 267],
  ['backward', `${TORCH}/_tensor.py`, 522],
];

/**
 * Stacks as the frameworks' own code has them (innermost first), each planted with the rule that
 * must label it. Framework frames under a module forward or under backward still name the
 * framework: its rules come before the generic ones.
 */
const PLANTED: { rule: string; frames: F[] }[] = [
  {
    rule: 'fsdp-flat-param',
    frames: [
      ['flatten_tensors', `${TORCH}/distributed/fsdp/_flat_param.py`, 791],
      ['flatten_tensors_into_flat_param', `${TORCH}/distributed/fsdp/_flat_param.py`, 810],
      ['_init_flat_param_and_metadata', `${TORCH}/distributed/fsdp/_flat_param.py`, 648],
      ['__init__', `${TORCH}/distributed/fsdp/_flat_param.py`, 582],
      ['_init_param_handle_from_params', `${TORCH}/distributed/fsdp/_init_utils.py`, 603],
      ['__init__', `${TORCH}/distributed/fsdp/fully_sharded_data_parallel.py`, 509],
      main,
    ],
  },
  {
    rule: 'fsdp-all-gather',
    frames: [
      ['_all_gather_flat_param', `${TORCH}/distributed/fsdp/_flat_param.py`, 1390],
      ['unshard', `${TORCH}/distributed/fsdp/_flat_param.py`, 1315],
      ['_unshard', `${TORCH}/distributed/fsdp/_runtime_utils.py`, 300],
      ['_pre_forward_unshard', `${TORCH}/distributed/fsdp/_runtime_utils.py`, 450],
      ['forward', `${TORCH}/distributed/fsdp/fully_sharded_data_parallel.py`, 857],
      ...forward,
      main,
    ],
  },
  {
    rule: 'fsdp-reduce-scatter',
    frames: [
      ['foreach_reduce', `${TORCH}/distributed/fsdp/_fully_shard/_fsdp_collectives.py`, 412],
      ['post_backward', `${TORCH}/distributed/fsdp/_fully_shard/_fsdp_param_group.py`, 450],
      ...backward,
      main,
    ],
  },
  {
    rule: 'deepspeed-zero-param',
    frames: [
      ['_allgather_params_coalesced', `${SP}/deepspeed/runtime/zero/partition_parameters.py`, 1803],
      ['all_gather_coalesced', `${SP}/deepspeed/runtime/zero/partition_parameters.py`, 1231],
      ['fetch_sub_module', `${SP}/deepspeed/runtime/zero/partitioned_param_coordinator.py`, 340],
      ['_pre_forward_module_hook', `${SP}/deepspeed/runtime/zero/parameter_offload.py`, 470],
      ...forward,
      main,
    ],
  },
  {
    rule: 'deepspeed-zero-grad',
    frames: [
      [
        'reduce_independent_p_g_buckets_and_remove_grads',
        `${SP}/deepspeed/runtime/zero/stage_1_and_2.py`,
        920,
      ],
      ['reduce_ready_partitions_and_remove_grads', `${SP}/deepspeed/runtime/zero/stage_1_and_2.py`, 1387],
      ['grad_handling_hook', `${SP}/deepspeed/runtime/zero/stage_1_and_2.py`, 900],
      ...backward,
      main,
    ],
  },
  {
    rule: 'deepspeed-zero-partition',
    frames: [
      ['_create_fp32_partitions', `${SP}/deepspeed/runtime/zero/stage3.py`, 822],
      ['_setup_for_real_optimizer', `${SP}/deepspeed/runtime/zero/stage3.py`, 491],
      ['__init__', `${SP}/deepspeed/runtime/zero/stage3.py`, 350],
      ['_configure_zero_optimizer', `${SP}/deepspeed/runtime/engine.py`, 1552],
      ['initialize', `${SP}/deepspeed/__init__.py`, 193],
      main,
    ],
  },
  {
    rule: 'megatron-grad-buffer',
    frames: [
      ['__init__', '/workspace/Megatron-LM/megatron/core/distributed/param_and_grad_buffer.py', 577],
      [
        '_allocate_buffers_for_parameters',
        '/workspace/Megatron-LM/megatron/core/distributed/distributed_data_parallel.py',
        190,
      ],
      ['__init__', '/workspace/Megatron-LM/megatron/core/distributed/distributed_data_parallel.py', 241],
      ['get_model', '/workspace/Megatron-LM/megatron/training/training.py', 560],
      main,
    ],
  },
  {
    rule: 'megatron-distributed-optimizer',
    frames: [
      [
        '_build_model_and_main_param_groups',
        '/workspace/Megatron-LM/megatron/core/optimizer/distrib_optimizer.py',
        330,
      ],
      ['__init__', '/workspace/Megatron-LM/megatron/core/optimizer/distrib_optimizer.py', 480],
      [
        '_get_megatron_optimizer_based_on_param_groups',
        '/workspace/Megatron-LM/megatron/core/optimizer/__init__.py',
        297,
      ],
      main,
    ],
  },
  {
    rule: 'kv-cache',
    frames: [
      ['_allocate_kv_cache', '/usr/local/lib/python3.10/dist-packages/vllm/worker/cache_engine.py', 83],
      ['__init__', '/usr/local/lib/python3.10/dist-packages/vllm/worker/cache_engine.py', 68],
      ['_init_cache_engine', '/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py', 264],
      main,
    ],
  },
  {
    rule: 'kv-cache',
    frames: [
      ['_allocate_kv_cache_tensors', `${SP}/vllm/v1/worker/gpu_model_runner.py`, 2510],
      ['initialize_kv_cache', `${SP}/vllm/v1/worker/gpu_model_runner.py`, 2600],
      main,
    ],
  },
  {
    rule: 'kv-cache',
    frames: [
      ['update', `${SP}/transformers/cache_utils.py`, 447],
      ['forward', `${SP}/transformers/models/llama/modeling_llama.py`, 340],
      ...forward,
      ['generate', `${SP}/transformers/generation/utils.py`, 2215],
      main,
    ],
  },
  // Near misses: the words without the frameworks' files stay with the generic rules, or unknown.
  // vLLM's _initialize_kv_caches also runs the profiling forward pass: activations, no cache.
  {
    rule: 'forward-alive',
    frames: [
      ['forward', `${SP}/vllm/model_executor/layers/linear.py`, 474],
      ...forward,
      ['profile_run', `${SP}/vllm/worker/model_runner.py`, 1250],
      ['determine_num_available_blocks', `${SP}/vllm/worker/worker.py`, 229],
      ['_initialize_kv_caches', `${SP}/vllm/engine/llm_engine.py`, 432],
      main,
    ],
  },
  {
    rule: 'forward-alive',
    frames: [['shard_heads', `${USER}/fsdp_notes/attention.py`, 12], ...forward, main],
  },
  {
    rule: 'no-rule',
    frames: [
      ['reduce_scatter_stats', `${USER}/tools/stage3.py`, 5],
      ['make_partition', `${USER}/deepspeed_like/zero.py`, 9],
      main,
    ],
  },
];

describe('category rules for FSDP, DeepSpeed ZeRO, Megatron and KV caches', () => {
  const base = 0x7f0000000000;
  const size = 512;
  const frames = (fs: F[]) => fs.map(([name, filename, line]) => ({ name, filename, line }));
  const trace = PLANTED.map((p, k) => ({
    action: 'alloc',
    addr: base + k * size,
    size,
    stream: 0,
    time_us: 10 + k,
    frames: frames(p.frames),
  }));
  const s = snapshotOf({
    segments: [
      smallSegment(
        base,
        PLANTED.map(() => ({ state: 'active_allocated', requested: size, size })),
      ),
    ],
    device_traces: [trace],
  });
  const d = s.devices[0]!;
  const labels = labelAllocations(s, d);

  it('labels every planted stack with its rule', () => {
    const got = PLANTED.map((_, k) => RULES[labels.rule[d.allocations.ofEntry[k]!]!]!.id);
    expect(got).toEqual(PLANTED.map((p) => p.rule));
  });

  it('each framework rule has its own label naming it, and its category', () => {
    const rules = categoriesOf(s, d, 10).rules;
    const byId = new Map(rules.map((r) => [r.rule, r]));
    const expected: Record<string, string> = {
      'fsdp-flat-param': 'parameter',
      'fsdp-all-gather': 'parameter',
      'fsdp-reduce-scatter': 'gradient',
      'deepspeed-zero-param': 'parameter',
      'deepspeed-zero-grad': 'gradient',
      'deepspeed-zero-partition': 'optimizer_state',
      'megatron-grad-buffer': 'gradient',
      'megatron-distributed-optimizer': 'optimizer_state',
      'kv-cache': 'activation',
      'no-rule': 'unknown',
    };
    for (const [id, category] of Object.entries(expected)) {
      const r = byId.get(id);
      expect(r, id).toBeDefined();
      expect(r!.category, id).toBe(category);
      expect(r!.allocations, id).toBe(PLANTED.filter((p) => p.rule === id).length);
    }
    expect(byId.get('kv-cache')!.says).toMatch(/vLLM.*past_key_values/);
    expect(byId.get('fsdp-flat-param')!.says).toMatch(/FlatParameter/);
  });
});

describe('framework rules on real snapshots', () => {
  /** Bytes of each rule in one corpus file (device 0), and the bytes whose stack has a frame named `frame`. */
  const ruleBytes = (file: string, frame: string) => {
    const path = join(CORPUS, file);
    if (!existsSync(path)) return undefined;
    const s = loadSnapshotBytes(new Uint8Array(readFileSync(path)));
    const d = s.devices[0]!;
    const labels = labelAllocations(s, d);
    const bytes = new Map<string, number>();
    let under = 0;
    for (let id = 0; id < d.allocations.count; id++) {
      const rule = RULES[labels.rule[id]!]!.id;
      bytes.set(rule, (bytes.get(rule) ?? 0) + d.allocations.size[id]!);
      if (
        d.allocations.stack[id]! >= 0 &&
        s.stacks.frames(d.allocations.stack[id]!).some((f) => f.name === frame)
      )
        under += d.allocations.size[id]!;
    }
    return { bytes, under };
  };

  it('verl (vLLM rollout + Megatron): the CacheEngine blocks are the KV cache, nothing else is', () => {
    const r = ruleBytes('volcengine_verl__mem__27ee9a4.pickle', '_allocate_kv_cache');
    if (r === undefined) return;
    // Exactly what vLLM's CacheEngine._allocate_kv_cache made (~20 GiB of blocks), not the
    // profiling run's activations under _initialize_kv_caches.
    expect(r.under).toBeGreaterThan(20 * 2 ** 30);
    expect(r.bytes.get('kv-cache')).toBe(r.under);
    expect(r.bytes.get('megatron-grad-buffer')).toBeGreaterThan(0);
  });

  it("slime (Megatron): DDP's param/grad buffers and the distributed optimizer's fp32 shards", () => {
    const r = ruleBytes(
      'THUDM_slime__scripts_0804_3_shapshot_init_model__8ffda8b.pickle',
      '_allocate_buffers_for_parameters',
    );
    if (r === undefined) return;
    expect(r.under).toBeGreaterThan(2 ** 30);
    expect(r.bytes.get('megatron-grad-buffer')).toBe(r.under);
    expect(r.bytes.get('megatron-distributed-optimizer')).toBeGreaterThan(0);
    expect(r.bytes.has('kv-cache')).toBe(false);
  });
});
