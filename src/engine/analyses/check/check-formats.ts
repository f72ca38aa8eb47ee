/**
 * A check's verdict where CI reads it: plain text for the log, Markdown for a pull-request
 * comment, JUnit XML for test-result panels (one testcase per rule), GitHub Actions annotations.
 */
import { formatBytes, formatCount, plural } from '../../base/format.js';
import { type CheckResult, COUNTS_WORDS, type RuleResult } from './check.js';
import type { BlamedSegment, BlamedSite } from './check-subject.js';

export function siteText(s: BlamedSite): string {
  const f = s.frames[0];
  const where = f === undefined ? 'unknown site (no stack recorded)' : `${f.name} (${f.filename}:${f.line})`;
  if (s.segments !== undefined)
    return `${formatBytes(s.bytes)} free in ${plural(s.segments, 'segment')} kept reserved by blocks from ${where}`;
  return `${formatBytes(s.bytes)} from ${where}`;
}

export function segmentText(g: BlamedSegment): string {
  return `${formatBytes(g.free_bytes)} free of ${formatBytes(g.size)} in segment 0x${g.address.toString(16)} (${g.pool})`;
}

/** What a broken rule names, one line each: the segments (fragmentation), then the sites. */
function details(rule: RuleResult): string[] {
  return [...rule.segments.map(segmentText), ...rule.sites.map(siteText)];
}

function verdict(r: CheckResult): string {
  if (r.rules.length === 0) return 'no rules to check (give budgets, a config or --baseline)';
  const failed = r.rules.filter((x) => x.passed === false).length;
  const held = r.rules.filter((x) => x.passed === true).length;
  const unjudged = r.rules.length - failed - held;
  const also = unjudged > 0 ? `; ${formatCount(unjudged)} not judged` : '';
  if (failed > 0)
    return `FAILED: ${formatCount(failed)} of ${formatCount(r.rules.length)} rules broken${also}`;
  if (held > 0) return `passed: ${plural(held, 'rule')} ${held === 1 ? 'holds' : 'hold'}${also}`;
  return `not judged: the record cannot show what ${r.rules.length === 1 ? 'its rule asks' : `its ${formatCount(unjudged)} rules ask`}`;
}

/**
 * The report for a log or a terminal. `see` lays out the command under a failure after its
 * indent, as the CLI wraps commands to copy (engine code knows no terminal width).
 */
export function checkText(r: CheckResult, see: (command: string, indent: string) => string[]): string {
  const lines = [`${r.subject}: ${verdict(r)}`];
  for (const rule of r.rules) {
    const label = rule.passed === null ? 'skip' : rule.passed ? 'ok  ' : 'FAIL';
    lines.push(`  ${label} ${rule.rule}: ${rule.message}`);
    for (const line of details(rule)) lines.push(`         ${line}`);
    if (rule.passed === false) lines.push(...see(rule.command, ' '.repeat(9)));
  }
  return lines.join('\n');
}

function figureCell(rule: RuleResult, n: number | null): string {
  if (n === null) return '—';
  return rule.unit === 'bytes' ? formatBytes(n) : formatCount(n);
}

/** The figure, and what an allocated peak counts. */
function valueCell(rule: RuleResult): string {
  if (rule.passed === null) return '—';
  const counts = rule.counts === null ? '' : ` (${COUNTS_WORDS[rule.counts].short})`;
  return `${figureCell(rule, rule.value)}${counts}`;
}

/** Short enough for a pull-request comment: the verdict, one table row per rule, the sites of the failures. */
export function checkMarkdown(r: CheckResult): string {
  const out = [
    `### memlens check: ${!r.passed ? '❌' : r.rules.some((x) => x.passed === null) ? '⚠️' : '✅'} ${verdict(r)}`,
    '',
    `\`${mdCell(r.subject)}\``,
    '',
  ];
  if (r.rules.length > 0) {
    out.push('| rule | figure | limit | baseline | where | |', '|---|---:|---:|---:|---|---|');
    for (const rule of r.rules)
      out.push(
        `| ${rule.rule} | ${valueCell(rule)} | ${figureCell(rule, rule.limit)} | ${figureCell(rule, rule.baseline)} | ${mdCell(placeCell(rule))} | ${rule.passed === null ? 'not judged' : rule.passed ? 'ok' : '**FAIL**'} |`,
      );
  }
  for (const rule of r.rules.filter((x) => x.passed === false)) {
    out.push('', `**${rule.rule}**: ${mdCell(rule.message)}`);
    for (const line of details(rule)) out.push(`- ${mdCell(line)}`);
    out.push('', `See more: \`${rule.command}\``);
  }
  for (const rule of r.rules.filter((x) => x.passed === null))
    out.push('', `**${rule.rule}**: ${mdCell(rule.message)}`);
  return out.join('\n');
}

function placeCell(rule: RuleResult): string {
  const p = rule.place;
  if (p === null) return '';
  const rank = p.rank !== null ? `rank ${p.rank}` : '';
  const step = p.step !== null ? `step ${p.step}` : '';
  return [rank, step].filter((x) => x !== '').join(', ');
}

function mdCell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/`/g, "'").replace(/\n/g, ' ');
}

/** JUnit XML as CI systems read it: one suite per subject, one testcase per rule, a failure per broken rule. */
export function checkJunit(results: CheckResult[]): string {
  const count = (passed: boolean | null, rules = results.flatMap((r) => r.rules)) =>
    rules.filter((x) => x.passed === passed).length;
  const tests = results.reduce((n, r) => n + r.rules.length, 0);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="memlens check" tests="${tests}" failures="${count(false)}" errors="0" skipped="${count(null)}">`,
  ];
  for (const r of results) {
    out.push(
      `  <testsuite name="${xml(r.subject)}" tests="${r.rules.length}" failures="${count(false, r.rules)}" errors="0" skipped="${count(null, r.rules)}">`,
    );
    for (const rule of r.rules) {
      const open = `    <testcase name="${xml(rule.rule)}" classname="memlens.check"`;
      if (rule.passed) {
        out.push(`${open}/>`);
        continue;
      }
      if (rule.passed === null) {
        out.push(`${open}>`, `      <skipped message="${xml(rule.message)}"/>`, '    </testcase>');
        continue;
      }
      const body = [rule.message, ...details(rule), `see: ${rule.command}`].join('\n');
      out.push(
        `${open}>`,
        `      <failure message="${xml(rule.message)}" type="${xml(rule.rule)}">${xml(body)}</failure>`,
        '    </testcase>',
      );
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>');
  return out.join('\n');
}

function xml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '');
}

/**
 * GitHub Actions workflow commands: an error annotation per broken rule (shown on the run's
 * summary), placed on the line of the site that accounts for most of it when that file is in the
 * checked-out repository (`workspace`, GITHUB_WORKSPACE), so the pull request's diff shows it; a
 * warning per rule not judged, so a guard the record cannot serve is seen, not silently passed.
 */
export function checkAnnotations(r: CheckResult, workspace = ''): string[] {
  const unjudged = r.rules
    .filter((x) => x.passed === null)
    .map(
      (rule) =>
        `::warning title=${escapeProperty(`memlens check ${rule.rule}`)}::${escapeData(`${r.subject}: ${rule.message}`)}`,
    );
  const broken = r.rules
    .filter((x) => x.passed === false)
    .map((rule) => {
      const top = rule.sites[0];
      const segment = rule.segments[0];
      const detail = [
        ...(segment === undefined ? [] : [`; worst segment: ${segmentText(segment)}`]),
        ...(top === undefined ? [] : [`; most from ${siteText(top)}`]),
      ].join('');
      const props = [`title=${escapeProperty(`memlens check ${rule.rule}`)}`, ...sourceProps(top, workspace)];
      return `::error ${props.join(',')}::${escapeData(`${r.subject}: ${rule.message}${detail}`)}`;
    });
  return [...broken, ...unjudged];
}

/** `file=` (relative to the repository) and `line=` of the site's innermost frame in the repository. */
function sourceProps(site: BlamedSite | undefined, workspace: string): string[] {
  const inner = site?.frames[0];
  const root = workspace.replace(/\/+$/, '');
  if (inner === undefined || root === '' || !inner.filename.startsWith(`${root}/`)) return [];
  return [`file=${escapeProperty(inner.filename.slice(root.length + 1))}`, `line=${inner.line}`];
}

/** The escapes GitHub's toolkit (@actions/core) applies to a command's message and properties. */
function escapeData(s: string): string {
  return s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(s: string): string {
  return escapeData(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
}
