/**
 * Instruments the memlens page for the web benchmark, as an init script that runs before the
 * app: no change to the app is needed, and the app pays nothing when it is not benchmarked.
 *
 * Signals (all `performance.now()` of the page, so 0 is navigation start):
 * - every worker query: sent, answered, and for `load` the last progress message (every byte read
 *   and decoded; what follows is building the model's indexes and the summary);
 * - "timeline ready": the timeline canvas's `data-ready` turns "true" (a worker answer for the
 *   window on show has been painted into the layer), then two animation frames begin, so the
 *   frame that shows it has been drawn;
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
      B.queries.push({ id: msg.id, query: msg.query, sent: now(), done: null, lastByte: null });
      if (!hooked.has(this)) {
        hooked.add(this);
        this.addEventListener('message', (e) => {
          const d = e.data;
          const q = B.queries.findLast((x) => x.id === d.id);
          if (!q) return;
          if ('progress' in d) {
            if (d.progress.total !== null && d.progress.bytes >= d.progress.total) q.lastByte = now();
          } else q.done = now();
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
  B.firstTimeline = sharp();

  const plot = () => {
    const r = canvas().getBoundingClientRect();
    return { x0: r.left + 64, x1: r.right - 8, y: r.top + r.height / 2, c: canvas() };
  };
  const fire = (el, type, init) =>
    el.dispatchEvent(
      type === 'wheel'
        ? new WheelEvent(type, { bubbles: true, cancelable: true, ...init })
        : type.startsWith('key')
          ? new KeyboardEvent(type, { bubbles: true, cancelable: true, ...init })
          : new MouseEvent(type, { bubbles: true, cancelable: true, ...init }),
    );
  /** Waits (up to ms) for the URL hash to change: the app has rendered a new window. */
  const hashChange = async (h0, ms) => {
    for (const end = now() + ms; location.hash === h0 && now() < end; ) await sleep(5);
  };

  /** The whole trace, then one wheel step zooming to frac of it around the plot's middle. */
  B.zoomTo = async (frac) => {
    let p = plot();
    let h = location.hash;
    fire(p.c, 'keydown', { key: '0' });
    await hashChange(h, 1000);
    await sharp();
    if (frac < 1) {
      p = plot();
      h = location.hash;
      fire(p.c, 'wheel', { clientX: (p.x0 + p.x1) / 2, clientY: p.y, deltaY: Math.log(frac) / 0.0015 });
      await hashChange(h, 5000);
      await sharp();
    }
    const q = new URLSearchParams(location.hash.slice(1));
    return [Number(q.get('x0')), Number(q.get('x1'))];
  };

  /**
   * n steps of a gesture, one event per frame: 'wheel' zooms in and out by turns (the window stays
   * near where it is), 'drag' pans back and forth. A step's frame cost is the main thread's work
   * it caused: from the start of the frame the event is sent in until the thread is idle
   * (requestIdleCallback), plus the next frame (which paints the change) until idle again. It is
   * measured this way because headless Chromium runs frames at 60 Hz whatever the flags, so frame
   * intervals only say "under 16.7 ms" or not. sharp: from the last event to the worker's answer
   * for the last window painted.
   */
  const idle = () => new Promise((r) => requestIdleCallback(() => r(now())));
  B.gesture = async (kind, n) => {
    const p = plot();
    const x = (p.x0 + p.x1) / 2;
    const work = [];
    if (kind === 'drag') fire(p.c, 'mousedown', { clientX: x, clientY: p.y, buttons: 1 });
    for (let i = 0; i < n; i++) {
      const t0 = await frame();
      if (kind === 'drag') fire(p.c, 'mousemove', { clientX: x + 150 * Math.sin(i / 8), clientY: p.y, buttons: 1 });
      else fire(p.c, 'wheel', { clientX: x, clientY: p.y, deltaY: i % 2 ? 60 : -60 });
      const i0 = await idle();
      const t1 = await frame();
      const i1 = await idle();
      work.push(i0 - t0 + (i1 - t1));
    }
    const end = now();
    if (kind === 'drag') fire(p.c, 'mouseup', { clientX: x + 150 * Math.sin(n / 8), clientY: p.y });
    await sleep(0);
    return { work, sharp: (await sharp()) - end };
  };
  /** The same measure with no event: the floor (an empty frame's cost and the timer's grain). */
  B.idleFrames = async (n) => {
    const work = [];
    for (let i = 0; i < n; i++) {
      const t0 = await frame();
      const i0 = await idle();
      work.push(i0 - t0);
    }
    return work;
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
      segments: document.querySelectorAll('section.pool .segment').length,
      blocks: document.querySelectorAll('section.pool .b').length,
      poolQuery: lastQuery('pool'),
    };
  };
})();`;
