#!/usr/bin/env node
// Checks README.md and docs/**/*.md: every relative link and #anchor resolves, and every code fence closes.
//
// Usage: node scripts/check-links.mjs [root]   (root defaults to the working directory)
// Exit 0 when everything resolves; 1 with one line per problem (file:line: reason) otherwise.
// Anchors are GitHub's heading slugs (lower-cased, punctuation dropped, spaces to "-", "-1", "-2"
// for repeats) plus explicit <a name="..."> / id="..." anchors. Links inside code are not links.
// markdownlint does not see an unclosed fence (it just swallows the rest of the file), so this
// script reports one, and a fence with a language opening inside another fence, which is how an
// unclosed fence usually shows up in the middle of a file.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? '.');

/** README.md and every .md under docs/, as absolute paths. */
function markdownFiles() {
  const files = [];
  const readme = path.join(root, 'README.md');
  if (existsSync(readme)) files.push(readme);
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.md')) files.push(full);
    }
  };
  const docs = path.join(root, 'docs');
  if (existsSync(docs)) walk(docs);
  return files;
}

/** GitHub's slug of a heading's text. */
export function slugify(text) {
  const plain = text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images keep their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/[`*]/g, ''); // code and emphasis markers
  return plain
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)?.*$/;

/**
 * One file's lines outside fences, its anchors, and its fence problems.
 * @returns {{ prose: { line: number, text: string }[], anchors: Set<string>, problems: string[] }}
 */
function parse(file) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const prose = [];
  const anchors = new Set();
  const problems = [];
  const seen = new Map();
  let open = null; // { char, length, line }
  lines.forEach((text, i) => {
    const line = i + 1;
    const fence = FENCE.exec(text);
    if (open) {
      if (fence && fence[1][0] === open.char && fence[1].length >= open.length && !fence[2] && text.trim() === fence[1]) {
        open = null;
      } else if (fence && fence[2] && fence[1][0] === open.char) {
        problems.push(`${line}: a fence with a language opens inside the fence opened at line ${open.line} (is that one unclosed?)`);
      }
      return;
    }
    if (fence) {
      open = { char: fence[1][0], length: fence[1].length, line };
      return;
    }
    prose.push({ line, text });
    const heading = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/.exec(text);
    if (heading) {
      const base = slugify(heading[2]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of text.matchAll(/<a\s[^>]*?(?:name|id)="([^"]+)"/g)) anchors.add(m[1]);
  });
  if (open) problems.push(`${open.line}: this fence is never closed`);
  return { prose, anchors, problems };
}

/** Link targets on one line of prose: inline links, images, and reference definitions. */
function targets(text) {
  const code = text.replace(/`+[^`]*`+/g, (s) => ' '.repeat(s.length)); // inline code is not a link
  const found = [];
  for (const m of code.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) found.push(m[1]);
  const def = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(code);
  if (def) found.push(def[1]);
  return found;
}

const files = markdownFiles();
const parsed = new Map(files.map((f) => [f, parse(f)]));
const anchorsOf = (file) => {
  if (!parsed.has(file)) parsed.set(file, parse(file));
  return parsed.get(file).anchors;
};

const problems = [];
let links = 0;
for (const file of files) {
  const rel = path.relative(root, file);
  const { prose, problems: fenceProblems } = parsed.get(file);
  for (const p of fenceProblems) problems.push(`${rel}:${p}`);
  for (const { line, text } of prose) {
    for (const target of targets(text)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // absolute URL
      links++;
      const hash = target.indexOf('#');
      const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
      const dest = pathPart === '' ? file : path.resolve(path.dirname(file), pathPart);
      if (!dest.startsWith(root + path.sep) && dest !== root) {
        problems.push(`${rel}:${line}: ${target}: points outside the repository`);
        continue;
      }
      if (!existsSync(dest)) {
        problems.push(`${rel}:${line}: ${target}: no such file`);
        continue;
      }
      if (anchor === null || anchor === '') continue;
      if (statSync(dest).isDirectory() || !dest.endsWith('.md')) {
        problems.push(`${rel}:${line}: ${target}: an anchor into a file that is not markdown`);
        continue;
      }
      if (!anchorsOf(dest).has(anchor)) {
        problems.push(`${rel}:${line}: ${target}: no heading "#${anchor}" in ${path.relative(root, dest)}`);
      }
    }
  }
}

if (problems.length > 0) {
  process.stderr.write(`${problems.join('\n')}\n${problems.length} problem(s) in the markdown links and fences\n`);
  process.exit(1);
}
process.stdout.write(`check-links: ${links} relative links and anchors in ${files.length} files resolve; every fence closes\n`);
