/**
 * torch_npu's words replace CUDA's in sentences, never in the commands memlens prints to be run:
 * a file name there is data, and reworded it names a file that does not exist.
 */
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../../src/cli/command-table.js';
import {
  inProducerWords,
  jsonInProducerWords,
  MEMLENS_COMMANDS,
} from '../../../../src/engine/analyses/producer/wording.js';
import type { Producer } from '../../../../src/engine/model/producer.js';

const NPU: Producer = { kind: 'torch_npu', signals: ['a workspace_snapshot entry'] };
const FILE = "'/data/GPU runs/CUDA/device 3/oom.pickle'";

describe('the NPU words keep commands as written', () => {
  it('names every command the CLI has', () => {
    expect([...MEMLENS_COMMANDS].sort()).toEqual(COMMANDS.flatMap((c) => c.names).sort());
  });

  it('rewords the sentence around a command, not its file', () => {
    const text = `The GPU ran out on device 3 (memlens peak ${FILE} --at 54): see cudaMalloc.`;
    expect(inProducerWords(text, NPU)).toBe(
      `The NPU ran out on npu:3 (memlens peak ${FILE} --at 54): see aclrtMalloc.`,
    );
    const plain = 'memlens oom /data/GPU/cuda-oom.pickle --device 3';
    expect(inProducerWords(`$ ${plain}\nthe CUDA context`, NPU)).toBe(`$ ${plain}\nthe CANN runtime context`);
  });

  it('keeps a quote inside a quoted file name, and a command wrapped over lines in colour', () => {
    const quoted = `'/data/GPU'\\''s runs/device 3.pickle'`;
    expect(inProducerWords(`memlens leaks ${quoted} on the GPU`, NPU)).toBe(
      `memlens leaks ${quoted} on the NPU`,
    );
    const dim = (s: string) => `\x1b[2m${s}\x1b[22m`;
    const wrapped = [
      dim('           $ memlens peak \\'),
      dim(`${FILE} \\`),
      dim('               --at 31'),
      'the GPU',
    ].join('\n');
    expect(inProducerWords(wrapped, NPU)).toBe(wrapped.replace('the GPU', 'the NPU'));
  });

  it("a finding's command in JSON keeps its file, its headline is reworded", () => {
    const finding = { headline: 'The GPU ran out.', command: `memlens oom ${FILE}` };
    expect(jsonInProducerWords(finding, NPU)).toEqual({ ...finding, headline: 'The NPU ran out.' });
  });

  it('rewords prose that only names memlens', () => {
    expect(inProducerWords('memlens does not know the GPU', NPU)).toBe('memlens does not know the NPU');
  });

  it('says "an NPU" where CUDA\'s sentence says "a GPU"', () => {
    expect(inProducerWords('7.50 GiB of a GPU of 8.00 GiB; A GPU that small', NPU)).toBe(
      '7.50 GiB of an NPU of 8.00 GiB; An NPU that small',
    );
  });
});
