/**
 * Instruments the memlens page for the web benchmark, as an init script that runs before the
 * app: the app carries no benchmark code (it only writes what its timeline canvas shows in
 * `data-window` and `data-ready`, which the e2e tests read too).
 *
 * Signals (all `performance.now()` of the page, so 0 is navigation start):
 * - every worker query: sent, answered (its partial answers left aside), and for `load` the last progress message (every byte read
 *   and decoded; what follows is building the model's indexes and the summary);
 * - "timeline ready": the timeline canvas's `data-ready` turns "true" (a worker answer for the
 *   window on show has been painted into the layer), then two animation frames begin, so the
 *   frame that shows it has been drawn; "first timeline": the same for "outline" or "true" (the
 *   outline the worker sends ahead of a first answer, from the running totals alone);
 * - "first finding": the Diagnosis's first finding card is on the page, then two frames (and
 *   "all findings": its last analysis is in);
 * - "frame painted": after a frame's rendering work, the canvas's `data-window` (the window it
 *   drew) differs from the one before the input event (see B.arm);
 * - "pool ready": the pool section's `data-entry` changes, then two frames.
 * It is plain JavaScript (a string) because it runs in the page, not in Node.
 */
export const PAGE_SCRIPT = `(() => {
  const B = (window.__bench = { queries: [] });
  const post = Worker.prototype.postMessage;
  const hooked = new WeakSet();
  const now = () => performance.now();
  Worker.prototype.postMessage = function (msg, ...rest) {
    if (msg && typeof msg === 'object' && typeof msg.query === 'string') {
      const columns = msg.args?.request?.columns ?? null;
      B.queries.push({ id: msg.id, query: msg.query, columns, sent: now(), done: null, lastByte: null });
      if (!hooked.has(this)) {
        hooked.add(this);
        this.addEventListener('message', (e) => {
          const d = e.data;
          const q = B.queries.findLast((x) => x.id === d.id);
          if (!q) return;
          if ('progress' in d) {
            if (d.progress.total !== null && d.progress.bytes >= d.progress.total) q.lastByte = now();
          } else if (!('partial' in d)) q.done = now();
        });
      }
    }
    return post.call(this, msg, ...rest);
  };

  const frame = () => new Promise((r) => requestAnimationFrame(r));
  const twoFrames = () => frame().then(frame).then(now);
  const canvas = () => document.querySelector('canvas[data-ready]');
  const pool = () => document.querySelector('section.pool');
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  /** Resolves (after two frames) once test() holds, checked on every DOM change. */
  const when = (test) =>
    new Promise((resolve) => {
      let fired = false;
      const fire = () => {
        if (fired || !test()) return;
        fired = true;
        obs.disconnect();
        twoFrames().then(resolve);
      };
      const obs = new MutationObserver(fire);
      obs.observe(document, { subtree: true, childList: true, attributes: true });
      fire();
    });
  const sharp = () => when(() => canvas()?.getAttribute('data-ready') === 'true');
  // The first picture of the window (its outline, or the stacked answer when that comes first),
  // and the stacked one (every allocation placed).
  B.firstTimeline = when(() => ['outline', 'true'].includes(canvas()?.getAttribute('data-ready')));
  B.timelineStacked = sharp();
  // The Diagnosis's first finding card, and the moment its last analysis is in (aria-busy false).
  B.firstFinding = when(() => document.querySelector('main.diagnosis article.finding') !== null);
  // (A page that shows findings only once all are in has no aria-busy: its first is its last.)
  B.allFindings = when(() => document.querySelector('main.diagnosis:not([aria-busy="true"])') !== null);

  const plot = () => {
    const r = canvas().getBoundingClientRect();
    return { x0: r.left + 64, x1: r.right - 8, y: r.top + r.height / 2, c: canvas() };
  };
  B.plot = () => {
    const { x0, x1, y } = plot();
    return { x0, x1, y };
  };
  const fire = (el, type, init) =>
    el.dispatchEvent(
      type === 'wheel'
        ? new WheelEvent(type, { bubbles: true, cancelable: true, ...init })
        : type.startsWith('key')
          ? new KeyboardEvent(type, { bubbles: true, cancelable: true, ...init })
          : new MouseEvent(type, { bubbles: true, cancelable: true, ...init }),
    );
  /** The window the timeline canvas last drew (the app writes it on every drawn frame). */
  const drawn = () => canvas()?.getAttribute('data-window') ?? null;
  const frames = async (n) => {
    for (let i = 0; i < n; i++) await frame();
  };
  /** After the window the page was asked for is drawn and the worker's answer for it painted. */
  const settled = async () => {
    await frames(2);
    await sharp();
    return drawn().split(':').map(Number);
  };

  /** The whole trace, then one wheel step zooming to frac of it around the plot's middle. */
  B.zoomTo = async (frac) => {
    let p = plot();
    fire(p.c, 'keydown', { key: '0' });
    await settled();
    if (frac < 1) {
      p = plot();
      fire(p.c, 'wheel', { clientX: (p.x0 + p.x1) / 2, clientY: p.y, deltaY: Math.log(frac) / 0.0015 });
    }
    return settled();
  };

  /**
   * One step of a gesture, timed from its input event to the frame that shows it. Node arms the
   * watch, then sends one real input event through CDP (Playwright's mouse: a trusted event
   * through the browser's input pipeline, aligned to frames as a user's is). A capture listener
   * notes when the page received it (performance.now(), and the event's own timeStamp: when the
   * browser created it); the watch then checks after every frame's rendering work (a message
   * posted from requestAnimationFrame runs after that frame's rAF callbacks, style, layout and
   * paint) whether the canvas now shows a new window. frame = received → end of that frame;
   * latency = created → end of that frame; render = that frame's own work, from its first
   * animation-frame callback to its end. No new window within 20 frames: null (missed).
   */
  let input = null;
  for (const type of ['wheel', 'mousemove'])
    window.addEventListener(
      type,
      (e) => {
        if (input === null) input = { t: now(), ts: e.timeStamp };
      },
      { capture: true, passive: true },
    );
  /** Resolves after the next frame's rendering work with its end, and its start (the first rAF callback: this one, registered before the frame's others). */
  let frameStart = 0;
  const frameEnd = () =>
    new Promise((r) =>
      requestAnimationFrame(() => {
        frameStart = now();
        const ch = new MessageChannel();
        ch.port1.onmessage = () => r(now());
        ch.port2.postMessage(0);
      }),
    );
  let watch = null;
  B.arm = () => {
    const w = { before: drawn(), result: null, done: false, resolve: null };
    watch = w;
    input = null;
    (async () => {
      for (let i = 0; i < 20 && w.result === null; i++) {
        const t = await frameEnd();
        if (input !== null && drawn() !== w.before)
          w.result = { frame: t - input.t, latency: t - input.ts, render: t - frameStart };
      }
      w.done = true;
      w.resolve?.();
    })();
  };
  B.painted = () =>
    new Promise((r) => {
      const w = watch;
      if (w.done) r(w.result);
      else w.resolve = () => r(w.result);
    });
  B.frames = frames;
  /** From the gesture's last input event (sent after B.arm) to the worker's answer for its window, painted. */
  B.sharpAfterLast = async () => {
    const t = input?.t ?? now();
    await frameEnd();
    for (let i = 0; i < 1200; i++) {
      const end = await frameEnd();
      if (canvas().getAttribute('data-ready') === 'true') return end - t;
    }
    return null;
  };

  const lastQuery = (name) => {
    const q = B.queries.findLast((x) => x.query === name);
    return q && q.done !== null ? q.done - q.sent : null;
  };
  /** Selects an entry (a click at fraction fx of the plot, or a key) and times the pool view's update. */
  B.selectEntry = async (how, fx) => {
    const before = pool()?.getAttribute('data-entry') ?? null;
    const t0 = now();
    if (how === 'click') {
      const p = plot();
      const x = p.x0 + fx * (p.x1 - p.x0);
      fire(p.c, 'mousedown', { clientX: x, clientY: p.y, buttons: 1 });
      fire(p.c, 'mouseup', { clientX: x, clientY: p.y });
    } else fire(document.body, 'keydown', { key: how });
    const shown = await Promise.race([
      when(() => (pool()?.getAttribute('data-entry') ?? null) !== before),
      sleep(30000).then(() => null),
    ]);
    return {
      ms: shown === null ? null : shown - t0,
      entry: Number(pool()?.getAttribute('data-entry')),
      segments: Number(pool()?.getAttribute('data-segments')),
      blocks: Number(pool()?.getAttribute('data-blocks')),
      poolQuery: lastQuery('select'),
    };
  };
})();`;
