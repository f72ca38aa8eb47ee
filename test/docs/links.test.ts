import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link of README.md and docs/*.md points at a file that exists, and a link to a
 * heading (`cli.md#memlens-run`) at a heading that exists, as GitHub names its anchors.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const DOCS = join(ROOT, 'docs');
const pages = [
  join(ROOT, 'README.md'),
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(DOCS, f)),
];

/** The Markdown links and images of a page, outside code blocks and code spans. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(markdown: string): Set<string> {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...prose.matchAll(/^#{1,6}\s+(.*)$/gm)].map((m) => anchorOf(m[1]!)));
}

describe('documentation links resolve', () => {
  it('the checks can fail: a missing file and a missing heading are found', () => {
    expect(linksOf('see [x](docs/nope.md) and `[y](z.md)`')).toEqual(['docs/nope.md']);
    expect(anchorOf('`memlens FILE` / `memlens diagnose`')).toBe('memlens-file--memlens-diagnose');
    expect(anchorOf('Timeline & pool state')).toBe('timeline--pool-state');
  });

  it('covers the README and every docs/ page', () => {
    expect(pages.map((p) => relative(ROOT, p))).toEqual(
      expect.arrayContaining([
        'README.md',
        'docs/cli.md',
        'docs/web.md',
        'docs/json.md',
        'docs/architecture.md',
      ]),
    );
  });

  it('the README links every docs/ page', () => {
    const linked = new Set(
      linksOf(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((l) => l.split('#')[0]),
    );
    for (const page of pages.slice(1)) expect(linked, relative(ROOT, page)).toContain(relative(ROOT, page));
  });

  for (const page of pages)
    it(relative(ROOT, page), () => {
      const text = readFileSync(page, 'utf8');
      const broken: string[] = [];
      for (const link of linksOf(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto: — not ours to check
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? page : join(dirname(page), decodeURIComponent(path));
        if (!existsSync(target)) {
          broken.push(`${link}: no such file`);
          continue;
        }
        if (anchor && target.endsWith('.md') && statSync(target).isFile()) {
          if (!anchorsOf(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${link}: no such heading`);
        }
      }
      expect(broken).toEqual([]);
    });
});
