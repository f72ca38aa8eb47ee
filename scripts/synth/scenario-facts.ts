/** The expected-figures entries of the oom-cause and extra-buffer options, from pass 1's runs. */
import type { ExpectedFigures } from './figures.js';
import type { DeviceSim } from './sim.js';

export function scenarioFacts(
  sims: readonly Pick<DeviceSim, 'oomFacts' | 'extraBuffer'>[],
): Pick<ExpectedFigures, 'oom_causes' | 'extra_buffer'> {
  const out: Pick<ExpectedFigures, 'oom_causes' | 'extra_buffer'> = {};
  if (sims.some((s) => s.oomFacts !== null)) out.oom_causes = sims.map((s) => s.oomFacts!);
  const buffer = sims.find((s) => s.extraBuffer !== null)?.extraBuffer;
  if (buffer) out.extra_buffer = buffer;
  return out;
}
