import type { ZoomMode } from '../url-state.js';

const NEXT: Record<ZoomMode, ZoomMode> = { proportional: 'horizontal', horizontal: 'proportional' };
const WHAT: Record<ZoomMode, string> = {
  proportional: 'proportional zoom (Ctrl+↑/↓): the y axis follows the highest point in the window',
  horizontal: "horizontal zoom (Shift+↑/↓): the y axis keeps the whole trace's top, only time is stretched",
};

/** MindStudio Insight's zoom mode switch, at the top right of the timeline: proportional by default. */
export function ZoomModeButton({ mode, onMode }: { mode: ZoomMode; onMode: (m: ZoomMode) => void }) {
  return (
    <button
      type="button"
      className="zoom-mode"
      title={`${WHAT[mode]}. Click for ${NEXT[mode]}.`}
      aria-pressed={mode === 'horizontal'}
      onClick={() => onMode(NEXT[mode])}
    >
      zoom: {mode}
    </button>
  );
}
