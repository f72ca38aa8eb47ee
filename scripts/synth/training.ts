/**
 * The 'training' scenario: a GPT-style model is moved to the GPU, then iterations of
 * zero_grad / forward / backward / clip / AdamW step run, with varying sequence lengths (so
 * blocks get split and reused), input batches copied on a side stream and freed with
 * record_stream semantics, DDP gradient buckets on a comm stream, an occasional empty_cache,
 * and ProfilerStep#N annotations. A generator: it yields after every operator so the driver can
 * stop at an operation boundary.
 */
import type { Allocator } from './allocator.js';
import type { Block } from './blocks.js';
import type { CallSites, Place } from './callsites.js';
import type { Annotation, Clock } from './events.js';
import { LAYER_OPS, type LayerOp } from './layer-ops.js';
import { ACT, type ModelConfig, type ParamSpec, paramSpecs } from './model.js';
import { type PlantOptions, Plants } from './planted.js';
import type { Rng } from './rng.js';

export interface WorkloadStreams {
  /** Stream the input batch is copied on (0 when there are no extra streams). */
  readonly input: number;
  /** Stream of the gradient all-reduce buckets, if any. */
  readonly comm: number | null;
  /** Further streams, each with a small buffer per iteration. */
  readonly side: readonly number[];
  /** Stream a CUDA graph is captured on (private pool). */
  readonly capture: number;
}

export interface WorkloadOptions {
  readonly privatePool: boolean;
  readonly emptyCacheEvery: number;
  readonly plants: PlantOptions;
}

interface SavedOp {
  readonly op: LayerOp;
  readonly blocks: Block[];
}

const BUCKET_BYTES = 25 << 20;

export class TrainingWorkload {
  readonly annotations: Annotation[] = [];
  readonly plants: Plants;
  private readonly specs: ParamSpec[];
  private readonly paramIndex = new Map<string, number>();
  /** Per layer and LAYER_OPS entry: indices of the op's weight and bias (-1: none). */
  private readonly layerParams: { weight: number; bias: number }[][];
  private readonly params: Block[] = [];
  private readonly grads: (Block | null)[];
  private readonly optState: Block[] = [];
  private graphTensors: Block[] = [];
  private iteration = 0;
  private seq: number;

  constructor(
    private readonly a: Allocator,
    private readonly clock: Clock,
    private readonly rng: Rng,
    private readonly sites: CallSites,
    readonly model: ModelConfig,
    private readonly streams: WorkloadStreams,
    private readonly options: WorkloadOptions,
  ) {
    this.specs = paramSpecs(model);
    for (const [i, p] of this.specs.entries()) this.paramIndex.set(p.name, i);
    this.layerParams = Array.from({ length: model.layers }, (_, layer) =>
      LAYER_OPS.map((op) => ({
        weight: op.weight === undefined ? -1 : this.paramIndex.get(`h.${layer}.${op.weight}`)!,
        bias: op.bias === undefined ? -1 : this.paramIndex.get(`h.${layer}.${op.bias}`)!,
      })),
    );
    this.grads = this.specs.map(() => null);
    this.seq = model.seqMax;
    this.plants = new Plants(a, clock, sites, options.plants);
  }

  *run(): Generator<void, void> {
    yield* this.setup();
    for (;;) yield* this.step();
  }

  /**
   * After the main loop: an OOM (the allocator's flush completes every pending free, so blocks
   * meant to stay active_pending_free are freed after it, as an exception handler would).
   */
  finale(oom: boolean, pendingFrees: boolean, retries = 0): void {
    if (oom) {
      // 64 MiB steps up to 4 GiB: a multiplication, as a 32-bit shift would turn 2 GiB and up negative.
      const extra = this.rng.int(1, 64) * 2 ** 26 + this.rng.int(0, 1 << 20);
      const site = this.sites.alloc('lm_head', 'mm');
      for (let i = 0; i <= retries; i++) this.a.failAllocation(extra, 0, site);
      // A retry loop that gave up on the size tries a smaller request, which fails too.
      if (retries > 0) this.a.failAllocation(Math.ceil(extra / 2), 0, site);
    }
    if (pendingFrees) {
      const stream = this.streams.comm ?? this.streams.input;
      for (let i = this.rng.int(2, 6); i > 0; i--) {
        const b = this.mal(
          this.rng.int(1, 4096) * 4096 + this.rng.int(0, 511),
          'get_batch',
          '_to_copy',
          stream,
        );
        this.a.free(b, this.sites.free('step_end'), Infinity);
      }
    }
  }

  private *setup(): Generator<void, void> {
    this.clock.advance(this.rng.int(100_000, 3_000_000));
    for (const spec of this.specs) {
      this.params.push(this.mal(spec.bytes, 'to_device', '_to_copy'));
      yield;
    }
    if (this.options.privatePool) yield* this.captureGraph();
  }

  private *step(): Generator<void, void> {
    const n = this.iteration++;
    this.annotate('START', `ProfilerStep#${n}`);
    this.plants.collect(n);
    yield* this.zeroGrad();
    if (this.rng.chance(0.4))
      this.seq = Math.max(128, Math.round((this.model.seqMax * this.rng.int(8, 16)) / 16 / 64) * 64);
    const tokens = this.model.batch * this.seq;
    const inputs = [
      this.mal(tokens * 8, 'get_batch', '_to_copy', this.streams.input),
      this.mal(tokens * 8, 'get_batch', '_to_copy', this.streams.input),
      ...this.streams.side.map((s) => this.mal(this.rng.int(1, 8) << 19, 'get_batch', '_to_copy', s)),
    ];
    yield;
    const saved: SavedOp[][] = [];
    const head = yield* this.forward(tokens, saved);
    this.plants.keep(n);
    const buckets = yield* this.backward(tokens, saved, head);
    yield* this.optimizerStep();
    for (const b of buckets) this.rel(b, this.sites.free('step_end'));
    for (const b of inputs) {
      const deferred = b.segment.stream !== 0;
      this.rel(b, this.sites.free('step_end'), deferred ? this.rng.int(1, 12) : 0);
    }
    if (this.options.privatePool && n === 2) yield* this.captureGraph();
    // After the first step (a common warm-up habit), then periodically.
    if (n % this.options.emptyCacheEvery === 0) this.a.emptyCache(this.sites.emptyCache());
    this.annotate('END', `ProfilerStep#${n}`);
    yield;
  }

  private *zeroGrad(): Generator<void, void> {
    if (this.grads.every((g) => g === null)) return;
    this.annotate('START', 'Optimizer.zero_grad#AdamW.zero_grad');
    for (let i = 0; i < this.grads.length; i++) {
      const g = this.grads[i];
      if (g) this.rel(g, this.sites.free('zero_grad'));
      this.grads[i] = null;
      if (i % 16 === 15) yield;
    }
    this.annotate('END', 'Optimizer.zero_grad#AdamW.zero_grad');
  }

  private *forward(tokens: number, saved: SavedOp[][]): Generator<void, Block[]> {
    const unit = tokens * this.model.d * ACT;
    const emb = this.mal(unit, 'wte', 'embedding');
    const pos = this.mal(this.seq * this.model.d * ACT, 'wpe', 'embedding');
    const input = this.mal(unit, 'wte', 'add');
    this.rel(emb, this.sites.free('wte'));
    this.rel(pos, this.sites.free('wpe'));
    yield;
    // Each op's saved output is the next op's saved input, so only outputs are tracked.
    for (let layer = 0; layer < this.model.layers; layer++) {
      const ops: SavedOp[] = [];
      let temp: Block | null = null;
      for (let k = 0; k < LAYER_OPS.length; k++) {
        const op = LAYER_OPS[k]!;
        const blocks = this.extras(op, tokens, this.layerParams[layer]![k]!.weight);
        const out = this.mal(unit * op.out, op.place, op.op);
        if (temp !== null) this.rel(temp, this.sites.free(op.place));
        temp = op.keep === 'temp' ? out : null;
        if (op.keep === 'saved') blocks.push(out);
        ops.push({ op, blocks });
        this.kernel();
        yield;
      }
      saved.push(ops);
    }
    return [input, ...(yield* this.headForward(tokens))];
  }

  /** Saved side tensors of an op: autocast weight copy, norm statistics, dropout mask, lse. */
  private extras(op: LayerOp, tokens: number, weight: number): Block[] {
    const out: Block[] = [];
    const w = weight < 0 ? undefined : this.specs[weight]!;
    if (w !== undefined && w.castElems > 0) out.push(this.mal(w.castElems * ACT, op.place, '_to_copy'));
    if (op.extra === 'stats')
      out.push(this.mal(tokens * 4, op.place, op.op), this.mal(tokens * 4, op.place, op.op));
    if (op.extra === 'mask') out.push(this.mal(tokens * this.model.d, op.place, op.op));
    if (op.extra === 'lse')
      out.push(this.mal(this.model.batch * this.model.heads * this.seq * 4, op.place, op.op));
    return out;
  }

  private *headForward(tokens: number): Generator<void, Block[]> {
    const m = this.model;
    const norm = this.mal(tokens * m.d * ACT, 'ln_f', 'native_layer_norm');
    const cast = this.mal(m.vocab * m.d * ACT, 'lm_head', '_to_copy');
    const logits = this.mal(tokens * m.vocab * ACT, 'lm_head', 'mm');
    this.kernel();
    yield;
    const float = this.mal(tokens * m.vocab * 4, 'loss', '_to_copy');
    const logp = this.mal(tokens * m.vocab * 4, 'loss', '_log_softmax');
    this.rel(float, this.sites.free('loss'));
    const loss = this.mal(4, 'loss', 'nll_loss_forward');
    this.kernel();
    yield;
    return [norm, cast, logits, logp, loss];
  }

  private *backward(tokens: number, saved: SavedOp[][], head: Block[]): Generator<void, Block[]> {
    const m = this.model;
    const [input, norm, cast, logits, logp, loss] = head as [Block, Block, Block, Block, Block, Block];
    const g1 = this.bmal(tokens * m.vocab * 4, 'LogSoftmaxBackward0', '_log_softmax_backward_data');
    this.bfree(logp, 'LogSoftmaxBackward0');
    this.bfree(loss, 'NllLossBackward0');
    const g2 = this.bmal(tokens * m.vocab * ACT, 'ToCopyBackward0', '_to_copy');
    this.bfree(g1, 'ToCopyBackward0');
    let grad = this.bmal(tokens * m.d * ACT, 'MmBackward0', 'mm');
    this.paramGrad(this.paramIndex.get('wte')!, 'MmBackward0');
    for (const b of [g2, logits, cast]) this.bfree(b, 'MmBackward0');
    yield;
    const g3 = this.bmal(tokens * m.d * ACT, 'NativeLayerNormBackward0', 'native_layer_norm_backward');
    this.paramGrad(this.paramIndex.get('ln_f.weight')!, 'NativeLayerNormBackward0');
    this.paramGrad(this.paramIndex.get('ln_f.bias')!, 'NativeLayerNormBackward0');
    this.bfree(grad, 'NativeLayerNormBackward0');
    this.bfree(norm, 'NativeLayerNormBackward0');
    grad = g3;
    const buckets: Block[] = [];
    for (let layer = m.layers - 1; layer >= 0; layer--) {
      grad = yield* this.layerBackward(tokens, saved[layer]!, layer, grad);
      if (this.streams.comm !== null && layer % 4 === 0) {
        buckets.push(this.a.malloc(BUCKET_BYTES, this.streams.comm, 0, this.sites.bucketAlloc()));
      }
    }
    this.bfree(grad, 'EmbeddingBackward0');
    this.bfree(input, 'EmbeddingBackward0');
    this.paramGrad(this.paramIndex.get('wpe')!, 'EmbeddingBackward0');
    yield;
    return buckets;
  }

  private *layerBackward(tokens: number, ops: SavedOp[], layer: number, grad: Block): Generator<void, Block> {
    const unit = tokens * this.model.d * ACT;
    for (let i = ops.length - 1; i >= 0; i--) {
      const { op, blocks } = ops[i]!;
      const g = op.grad > 0 ? this.bmal(unit * op.grad, op.node, op.gradOp) : null;
      const params = this.layerParams[layer]![i]!;
      if (params.weight >= 0) this.paramGrad(params.weight, op.node);
      if (params.bias >= 0) this.paramGrad(params.bias, op.node);
      for (const b of blocks) this.bfree(b, op.node);
      if (g !== null) {
        this.bfree(grad, op.node);
        grad = g;
      }
      this.kernel();
      yield;
    }
    return grad;
  }

  /** A weight's gradient: bf16 matmul result cast to the fp32 `.grad`, which then persists. */
  private paramGrad(i: number, node: string): void {
    const spec = this.specs[i]!;
    if (spec.castElems > 0) {
      const half = this.bmal(spec.castElems * ACT, node, 'mm');
      this.grads[i] ??= this.bmal(spec.bytes, 'ToCopyBackward0', '_to_copy');
      this.bfree(half, 'ToCopyBackward0');
    } else {
      this.grads[i] ??= this.bmal(spec.bytes, node, 'sum');
    }
  }

  private *optimizerStep(): Generator<void, void> {
    const norms = this.params.map(() => this.mal(4, 'clip_grad', '_foreach_norm'));
    const total = this.mal(4, 'clip_grad', 'stack');
    for (const b of norms) this.rel(b, this.sites.free('clip_grad'));
    const coef = this.mal(4, 'clip_grad', 'clamp');
    this.rel(total, this.sites.free('clip_grad'));
    this.rel(coef, this.sites.free('clip_grad'));
    yield;
    this.annotate('START', 'Optimizer.step#AdamW.step');
    if (this.optState.length === 0) {
      for (const spec of this.specs) {
        this.optState.push(
          this.mal(spec.bytes, 'adam_init', 'zeros_like'),
          this.mal(spec.bytes, 'adam_init', 'zeros_like'),
        );
      }
      yield;
    }
    const temps = this.specs.map((s) => this.mal(s.bytes, 'adam', '_foreach_sqrt'));
    this.kernel();
    yield;
    for (const t of temps) this.rel(t, this.sites.free('adam'));
    this.annotate('END', 'Optimizer.step#AdamW.step');
    yield;
  }

  /** A CUDA graph captured into the private pool: static input and output stay, intermediates go. */
  private *captureGraph(): Generator<void, void> {
    const stream = this.streams.capture;
    for (const b of this.graphTensors) this.rel(b, this.sites.free('graph_capture'));
    const unit = this.rng.int(1, 64) * 64 * this.model.d * ACT;
    const input = this.mal(unit, 'graph_capture', 'empty', stream, 1);
    let prev: Block | null = null;
    for (let i = 0; i < 12; i++) {
      const out = this.mal(
        unit * this.rng.pick([1, 3, 4]) + (i % 3 === 0 ? 4096 : 0),
        'graph_capture',
        'addmm',
        stream,
        1,
      );
      if (prev !== null) this.rel(prev, this.sites.free('graph_capture'));
      prev = out;
      yield;
    }
    this.graphTensors = [input, prev!];
  }

  private mal(bytes: number, place: Place, op: string, stream = 0, pool = 0): Block {
    const b = this.a.malloc(bytes, stream, pool, this.sites.alloc(place, op));
    this.clock.advance(this.rng.int(1, 6));
    return b;
  }

  private rel(b: Block, stack: ReturnType<CallSites['free']>, defer = 0): void {
    this.a.free(b, stack, defer);
    this.clock.advance(this.rng.int(0, 3));
  }

  private bmal(bytes: number, node: string, op: string): Block {
    const b = this.a.malloc(bytes, 0, 0, this.sites.backwardAlloc(node, op));
    this.clock.advance(this.rng.int(1, 6));
    return b;
  }

  private bfree(b: Block, node: string): void {
    this.rel(b, this.sites.backwardFree(node));
  }

  private kernel(): void {
    this.clock.advance(this.rng.int(15, 400));
  }

  private annotate(stage: 'START' | 'END', name: string): void {
    this.annotations.push({ stage, name, time: this.clock.now });
    this.clock.advance(1);
  }
}
