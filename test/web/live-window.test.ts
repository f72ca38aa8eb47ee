import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LiveWindow } from '../../web/src/timeline/live-window.js';

/**
 * The timeline's live window: pan and zoom reach the canvases at once and the page's state (URL,
 * other views) once the gesture settles; the state's echo of its own commit never undoes a later
 * event, while a window the state names (a link, a button) is shown.
 */
describe('LiveWindow', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const make = () => {
    const commits: [number, number][] = [];
    const seen: [number, number][] = [];
    const live = new LiveWindow([0, 100], (w) => commits.push(w));
    live.subscribe((w) => seen.push(w));
    return { live, commits, seen };
  };

  it('every move reaches subscribers at once; the state gets one commit, the last window, when moves stop', () => {
    const { live, commits, seen } = make();
    for (let i = 1; i <= 10; i++) {
      live.set([i, 100 + i]);
      vi.advanceTimersByTime(50);
    }
    expect(seen).toHaveLength(10);
    expect(commits).toEqual([]);
    vi.advanceTimersByTime(250);
    expect(commits).toEqual([[10, 110]]);
    expect(live.get()).toEqual([10, 110]);
  });

  it("the state's echo of a commit is ignored, even after later moves; flush commits at once", () => {
    const { live, commits, seen } = make();
    live.set([5, 50]);
    live.flush();
    expect(commits).toEqual([[5, 50]]);
    live.set([6, 60]);
    live.adopt([5, 50]); // the render that carries the commit arrives after the next move
    expect(live.get()).toEqual([6, 60]);
    expect(seen).toEqual([
      [5, 50],
      [6, 60],
    ]);
  });

  it('a window the state names is shown, and a pending commit of an older move is dropped', () => {
    const { live, commits, seen } = make();
    live.set([5, 50]);
    live.adopt([20, 30]);
    vi.advanceTimersByTime(1000);
    expect(live.get()).toEqual([20, 30]);
    expect(seen.at(-1)).toEqual([20, 30]);
    expect(commits).toEqual([]);
  });
});
