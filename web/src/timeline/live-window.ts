export type Window = [number, number];
type Listener = (w: Window) => void;

/** How long the window must stay still before the page's state (URL, other views) follows it. */
const SETTLE_MS = 250;

/**
 * The timeline's window while the user pans or zooms. Every wheel or drag event changes it here
 * and its subscribers (the timeline and the minimap canvases) redraw in the next animation frame;
 * React state and the URL follow only once the gesture settles, so a frame renders no React tree
 * and writes no history entry.
 */
export class LiveWindow {
  private w: Window;
  private readonly listeners = new Set<Listener>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private committed: Window;

  constructor(
    initial: Window,
    private readonly commit: (w: Window) => void,
  ) {
    this.w = initial;
    this.committed = initial;
  }

  get(): Window {
    return this.w;
  }

  /** A gesture moved the window: draw it now, commit it when the gesture settles. */
  set(w: Window): void {
    if (same(w, this.w)) return;
    this.w = w;
    this.notify();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), SETTLE_MS);
  }

  /** Commits a pending window at once (a click that selects must not lose the gesture before it). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (same(this.w, this.committed)) return;
    this.committed = this.w;
    this.commit(this.w);
  }

  /**
   * The page's state names a window (a link, a button, an axis switch): show it, unless it is the
   * one this store committed itself (its echo must not undo events that came after the commit).
   */
  adopt(w: Window): void {
    if (same(w, this.committed)) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.committed = w;
    if (same(w, this.w)) return;
    this.w = w;
    this.notify();
  }

  subscribe(f: Listener): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  dispose(): void {
    clearTimeout(this.timer);
  }

  private notify(): void {
    for (const f of this.listeners) f(this.w);
  }
}

function same(a: Window, b: Window): boolean {
  return a[0] === b[0] && a[1] === b[1];
}
