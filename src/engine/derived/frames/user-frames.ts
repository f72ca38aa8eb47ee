/**
 * The one frame filter every report and view goes through: which frames of a recorded stack to
 * show, and which one frame names an allocation. The user's own code comes first; the machinery
 * every allocation passes through (frame-kinds.ts) is hidden unless whole stacks are asked for.
 */
import {
  type FrameKind,
  type FrameLike,
  frameKind,
  HIDDEN_KINDS,
  isHidden,
  isUserCode,
} from './frame-kinds.js';

export { type FrameKind, type FrameLike, frameKind, isUserCode } from './frame-kinds.js';

export interface ShowOptions {
  /** Every recorded frame, in order (`--full-stacks`, the views' "full stacks"). */
  full?: boolean;
}

/**
 * The frames a report groups and lists an allocation by, innermost first: the user's own frames;
 * without any, the libraries' Python frames; without those (a backward-pass stack), the operator
 * and autograd frames with the machinery hidden. With `full`, the whole stack.
 */
export function shownFrames<F extends FrameLike>(frames: F[], opts: ShowOptions = {}): F[] {
  if (opts.full) return frames;
  const user = frames.filter(isUserCode);
  if (user.length > 0) return user;
  const kinds = frames.map(frameKind);
  const library = frames.filter((_, i) => kinds[i] === 'library');
  if (library.length > 0) return library;
  const visible = frames.filter((_, i) => !HIDDEN_KINDS.has(kinds[i]!));
  return visible.length > 0 ? visible : frames;
}

/** The frames a report groups by (shownFrames without `full`). */
export function userFrames<F extends FrameLike>(frames: F[]): F[] {
  return shownFrames(frames);
}

/** The one frame that names an allocation in a table cell or a headline, full stacks or not. */
export function topUserFrame<F extends FrameLike>(frames: F[]): F | undefined {
  return shownFrames(frames)[0];
}

export type KindedFrame<F extends FrameLike = FrameLike> = F & { kind: FrameKind };

/** A whole stack as a reader wants it: the user's code first, what it called after, machinery hidden. */
export interface UserFirstStack<F extends FrameLike> {
  /** From the innermost frame of the user's code outwards (every visible frame without user code). */
  frames: KindedFrame<F>[];
  /** The visible frames inside that innermost user frame (the library and operator it called), innermost first. */
  inner: KindedFrame<F>[];
  /** Recorder, allocator, dispatcher and interpreter frames left out of both. */
  hidden: number;
  /** Every frame, in order, with its kind (full stacks). */
  all: KindedFrame<F>[];
}

export function userFirstStack<F extends FrameLike>(frames: F[]): UserFirstStack<F> {
  const kinded = frames.map((f) => ({ ...f, kind: frameKind(f) }));
  const visible = kinded.filter((f) => !HIDDEN_KINDS.has(f.kind));
  const first = visible.findIndex((f) => f.kind === 'user');
  return {
    frames: first < 0 ? visible : visible.slice(first),
    inner: first < 0 ? [] : visible.slice(0, first),
    hidden: kinded.length - visible.length,
    all: kinded,
  };
}

/**
 * The frames a table cell lists for a site (at most `shown`) and how many it leaves out. A whole
 * stack (full stacks) leads with its user-first view rather than the recorder's frames.
 */
export function cellFrames<F extends FrameLike>(frames: F[], shown: number): { frames: F[]; more: number } {
  const lead = frames.some(isHidden) ? userFirstStack(frames).frames : frames;
  return { frames: lead.slice(0, shown), more: frames.length - Math.min(shown, lead.length) };
}
