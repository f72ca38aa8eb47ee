import type { Frame } from '../../model/stack-table.js';
import { siteText } from '../leaks/leaks.js';

/** An autograd node's C++ name ("torch::autograd::generated::MulBackward0::apply" → MulBackward0). */
const BACKWARD_NODE = /\b(\w+Backward\w*)::apply\b|\b(\w+Backward\d+)\b/;

/**
 * A leak's site in a headline, and what its stack cannot show. A stack with no Python frame was
 * allocated by C++ alone, most often by the autograd engine during backward: the headline names
 * that backward operation, and says the forward code that made its input is not in the trace.
 */
export function leakSite(frames: Frame[]): { text: string; evidence: string[] } {
  if (frames.some((f) => f.filename.endsWith('.py'))) return { text: siteText(frames), evidence: [] };
  const node = frames.map((f) => BACKWARD_NODE.exec(f.name)).find((m) => m !== null);
  const op = node?.[1] ?? node?.[2];
  if (op === undefined)
    return {
      text: siteText(frames),
      evidence: ['its stack holds no Python frame: the code that asked for it is not in the trace'],
    };
  return {
    text: `the backward operation ${op}`,
    evidence: [
      `its stack holds no Python frame: ${op} allocated it during backward; the forward code whose tensor it belongs to is not in the trace`,
    ],
  };
}
