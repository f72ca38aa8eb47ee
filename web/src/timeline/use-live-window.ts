import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { LiveWindow, type Window } from './live-window.js';

/** A LiveWindow that follows the committed window of the page's state and commits back to it. */
export function useLiveWindow(committed: Window, commit: (w: Window) => void): LiveWindow {
  const latest = useRef(commit);
  latest.current = commit;
  const [live] = useState(() => new LiveWindow(committed, (w) => latest.current(w)));
  const [a, b] = committed;
  // Before any passive effect: the views' queries must see the adopted window (an axis switch
  // must not first query the old axis's numbers on the new axis).
  useLayoutEffect(() => live.adopt([a, b]), [live, a, b]);
  useEffect(() => () => live.dispose(), [live]);
  return live;
}
