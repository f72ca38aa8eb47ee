/**
 * What the frames of distributed-training and inference frameworks say about a tensor: FSDP's
 * flat parameters and its all-gather / reduce-scatter buffers, DeepSpeed ZeRO's partitions,
 * Megatron-LM's gradient buffers and distributed optimizer, and the KV caches of vLLM and
 * Hugging Face generation. These frames sit under (or instead of) the generic ones the other
 * rules read (a module forward, backward, an optimizer), so their rules are tried first.
 * Patterns name the frameworks' own files and functions, as their sources have them.
 */

/** Bits above category-rules.ts's Trait bits, in the same per-frame / per-stack masks. */
export enum FrameworkTrait {
  fsdpFlatParam = 1 << 16,
  fsdpAllGather = 1 << 17,
  fsdpReduceScatter = 1 << 18,
  deepspeedParam = 1 << 19,
  deepspeedGrad = 1 << 20,
  deepspeedPartition = 1 << 21,
  megatronGradBuffer = 1 << 22,
  megatronDistOptimizer = 1 << 23,
  kvCache = 1 << 24,
}

/** FSDP (torch.distributed.fsdp, FSDP2's fully_shard, and its older _composable home). */
const FSDP_FILE = /\/torch\/distributed\/(fsdp|_composable\/fsdp)\/[^/]+(\/[^/]+)?\.py$/;
const FSDP_REDUCE = /reduce|_post_backward|grad/i;
const FSDP_GATHER = /all_gather|unshard|_alloc_padded/i;
const FSDP_FLAT = /flat_?param|flatten|shard|FlatParameter|__init__|__new__/i;

/** DeepSpeed ZeRO: parameter partitioning and gathering, and the stage 1-3 optimizers. */
const ZERO_PARAM_FILE =
  /deepspeed\/runtime\/zero\/(partition_parameters|parameter_offload|partitioned_param_coordinator)\.py$/;
const ZERO_STAGE_FILE = /deepspeed\/runtime\/zero\/(stage_1_and_2|stage3|stage2|stage1)\.py$/;
const ZERO_GRAD = /grad|ipg|reduce|average_tensor/i;
const ZERO_PARTITION = /partition|fp32|flat|optimizer_state|init/i;

/** Megatron-LM core: DDP's contiguous param/grad buffers, and the distributed optimizer. */
const MEGATRON_BUFFER_FILE = /megatron\/core\/distributed\/[^/]+\.py$/;
const MEGATRON_DIST_OPTIMIZER = /megatron\/core\/optimizer\/distrib_optimizer\.py$/;

/**
 * vLLM's cache engine and KV-cache allocation; Hugging Face transformers' cache classes. Only the
 * functions that allocate the cache: vLLM's _initialize_kv_caches also runs the profiling forward
 * pass, whose activations are no cache.
 */
const KV_CACHE_FILE = /(vllm\/.*cache_engine|transformers\/cache_utils)\.py$/;
const KV_CACHE_NAME =
  /(^|_)allocate_kv_caches?\b|kv_cache_tensors|^initialize_kv_cache$|past_key_values|CacheEngine|DynamicCache|StaticCache/i;

export function frameworkTraits(filename: string, name: string): number {
  let t = 0;
  if (FSDP_FILE.test(filename) || name.includes('FlatParameter')) {
    if (FSDP_REDUCE.test(name)) t |= FrameworkTrait.fsdpReduceScatter;
    else if (FSDP_GATHER.test(name)) t |= FrameworkTrait.fsdpAllGather;
    else if (FSDP_FLAT.test(name) || filename.endsWith('_flat_param.py')) t |= FrameworkTrait.fsdpFlatParam;
  }
  if (ZERO_PARAM_FILE.test(filename)) t |= FrameworkTrait.deepspeedParam;
  else if (ZERO_STAGE_FILE.test(filename)) {
    if (ZERO_GRAD.test(name)) t |= FrameworkTrait.deepspeedGrad;
    else if (ZERO_PARTITION.test(name)) t |= FrameworkTrait.deepspeedPartition;
  }
  if (MEGATRON_BUFFER_FILE.test(filename)) t |= FrameworkTrait.megatronGradBuffer;
  if (MEGATRON_DIST_OPTIMIZER.test(filename)) t |= FrameworkTrait.megatronDistOptimizer;
  if (KV_CACHE_FILE.test(filename) || KV_CACHE_NAME.test(name)) t |= FrameworkTrait.kvCache;
  return t;
}

/**
 * The framework rules in the order they are tried (see categories.ts RULES), each with the trait
 * that fires it. Gradient traffic before parameters: a reduce-scatter in a post-backward hook
 * also runs under the frames that gathered its parameters.
 */
export const FRAMEWORK_RULES = [
  {
    trait: FrameworkTrait.fsdpReduceScatter,
    id: 'fsdp-reduce-scatter',
    category: 'gradient',
    says: 'allocated in FSDP gradient reduction (reduce-scatter input/output, post-backward hook)',
  },
  {
    trait: FrameworkTrait.fsdpAllGather,
    category: 'parameter',
    id: 'fsdp-all-gather',
    says: 'allocated in FSDP unshard / all-gather (unsharded parameters for compute)',
  },
  {
    trait: FrameworkTrait.fsdpFlatParam,
    id: 'fsdp-flat-param',
    category: 'parameter',
    says: 'allocated in FSDP flat-parameter construction (FlatParameter, _flat_param, sharded params)',
  },
  {
    trait: FrameworkTrait.deepspeedGrad,
    id: 'deepspeed-zero-grad',
    category: 'gradient',
    says: 'allocated in DeepSpeed ZeRO gradient handling (ipg buckets, reduce, grad partitions)',
  },
  {
    trait: FrameworkTrait.deepspeedParam,
    id: 'deepspeed-zero-param',
    category: 'parameter',
    says: 'allocated in DeepSpeed ZeRO parameter partitioning / all-gather (deepspeed/runtime/zero)',
  },
  {
    trait: FrameworkTrait.deepspeedPartition,
    id: 'deepspeed-zero-partition',
    category: 'optimizer_state',
    says: 'allocated in a DeepSpeed ZeRO optimizer partition (fp32 master weights, optimizer state)',
  },
  {
    trait: FrameworkTrait.megatronDistOptimizer,
    id: 'megatron-distributed-optimizer',
    category: 'optimizer_state',
    says: "allocated in Megatron's distributed optimizer (fp32 main-parameter shards)",
  },
  {
    trait: FrameworkTrait.megatronGradBuffer,
    id: 'megatron-grad-buffer',
    category: 'gradient',
    says: "allocated in Megatron's DDP buffers (megatron/core/distributed: grad_data, and the param_data the distributed optimizer shares)",
  },
  {
    trait: FrameworkTrait.kvCache,
    id: 'kv-cache',
    category: 'activation',
    says: 'an inference KV cache (vLLM CacheEngine / kv_cache, Hugging Face past_key_values / DynamicCache)',
  },
] as const;
