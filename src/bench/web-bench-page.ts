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
   * A gesture, one step (one event) at a time, driven from Node, which reads the main thread's
   * task time (CDP Performance.getMetrics TaskDuration) around each step: headless Chromium runs
   * frames at 60 Hz whatever the flags, so frame intervals and idle callbacks only say "under
   * 16.7 ms" or not. 'wheel' zooms in and out by turns (the window stays near where it is), 'drag'
   * pans back and forth, 'none' sends nothing (the floor: the step's own frames). A step returns
   * after two frames, so the frame that paints its change is in it.
   */
  let gx = 0;
  let gy = 0;
  B.gestureStart = (kind) => {
    const p = plot();
    gx = (p.x0 + p.x1) / 2;
    gy = p.y;
    if (kind === 'drag') fire(p.c, 'mousedown', { clientX: gx, clientY: gy, buttons: 1 });
  };
  const dragX = (i) => gx + 150 * Math.sin(i / 8);
  B.step = async (kind, i) => {
    const c = canvas();
    if (kind === 'drag') fire(c, 'mousemove', { clientX: dragX(i), clientY: gy, buttons: 1 });
    else if (kind === 'wheel') fire(c, 'wheel', { clientX: gx, clientY: gy, deltaY: i % 2 ? 60 : -60 });
    await frame();
    await frame();
  };
  /** Ends the gesture; resolves with the time from its end to the sharp frame (the worker's answer for the last window, painted). */
  B.gestureEnd = async (kind, n) => {
    const end = now();
    if (kind === 'drag') fire(canvas(), 'mouseup', { clientX: dragX(n), clientY: gy });
    await sleep(0);
    return (await sharp()) - end;
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
