/**
 * The operators of one transformer block as the training workload replays them: what each
 * allocates in forward, how long its output lives, and what its backward node allocates.
 */
import type { Place } from './callsites.js';

export interface LayerOp {
  readonly place: Place;
  /** ATen op named in the allocation's frames. */
  readonly op: string;
  /** Output size in units of tokens x d x 2 bytes. */
  readonly out: number;
  /** 'saved': lives until its backward; 'temp': freed once the next op has its output. */
  readonly keep: 'saved' | 'temp';
  /** Extra saved tensors: 'stats' (layer-norm mean/rstd), 'mask' (dropout), 'lse' (attention). */
  readonly extra?: 'stats' | 'mask' | 'lse';
  /** Parameter names (suffixes of `h.N.`) whose gradients this op's backward produces. */
  readonly weight?: string;
  readonly bias?: string;
  readonly node: string;
  readonly gradOp: string;
  /** Input-gradient size in units of tokens x d x 2 bytes (0: gradient passes through). */
  readonly grad: number;
}

export const LAYER_OPS: readonly LayerOp[] = [
  {
    place: 'ln_1',
    op: 'native_layer_norm',
    out: 1,
    keep: 'saved',
    extra: 'stats',
    weight: 'ln_1.weight',
    bias: 'ln_1.bias',
    node: 'NativeLayerNormBackward0',
    gradOp: 'native_layer_norm_backward',
    grad: 1,
  },
  {
    place: 'c_attn',
    op: 'addmm',
    out: 3,
    keep: 'saved',
    weight: 'attn.c_attn.weight',
    bias: 'attn.c_attn.bias',
    node: 'AddmmBackward0',
    gradOp: 'mm',
    grad: 1,
  },
  {
    place: 'sdpa',
    op: '_scaled_dot_product_efficient_attention',
    out: 1,
    keep: 'saved',
    extra: 'lse',
    node: 'ScaledDotProductEfficientAttentionBackward0',
    gradOp: '_efficient_attention_backward',
    grad: 3,
  },
  {
    place: 'attn_proj',
    op: 'addmm',
    out: 1,
    keep: 'temp',
    weight: 'attn.c_proj.weight',
    bias: 'attn.c_proj.bias',
    node: 'AddmmBackward0',
    gradOp: 'mm',
    grad: 1,
  },
  {
    place: 'attn_dropout',
    op: 'native_dropout',
    out: 1,
    keep: 'temp',
    extra: 'mask',
    node: 'NativeDropoutBackward0',
    gradOp: 'native_dropout_backward',
    grad: 1,
  },
  { place: 'resid_attn', op: 'add', out: 1, keep: 'saved', node: 'AddBackward0', gradOp: 'add', grad: 0 },
  {
    place: 'ln_2',
    op: 'native_layer_norm',
    out: 1,
    keep: 'saved',
    extra: 'stats',
    weight: 'ln_2.weight',
    bias: 'ln_2.bias',
    node: 'NativeLayerNormBackward0',
    gradOp: 'native_layer_norm_backward',
    grad: 1,
  },
  {
    place: 'c_fc',
    op: 'addmm',
    out: 4,
    keep: 'saved',
    weight: 'mlp.c_fc.weight',
    bias: 'mlp.c_fc.bias',
    node: 'AddmmBackward0',
    gradOp: 'mm',
    grad: 1,
  },
  {
    place: 'gelu',
    op: 'gelu',
    out: 4,
    keep: 'saved',
    node: 'GeluBackward0',
    gradOp: 'gelu_backward',
    grad: 4,
  },
  {
    place: 'mlp_proj',
    op: 'addmm',
    out: 1,
    keep: 'temp',
    weight: 'mlp.c_proj.weight',
    bias: 'mlp.c_proj.bias',
    node: 'AddmmBackward0',
    gradOp: 'mm',
    grad: 4,
  },
  {
    place: 'mlp_dropout',
    op: 'native_dropout',
    out: 1,
    keep: 'temp',
    extra: 'mask',
    node: 'NativeDropoutBackward0',
    gradOp: 'native_dropout_backward',
    grad: 1,
  },
  { place: 'resid_mlp', op: 'add', out: 1, keep: 'saved', node: 'AddBackward0', gradOp: 'add', grad: 0 },
];
