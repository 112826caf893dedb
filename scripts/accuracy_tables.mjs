#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// The leave-one-source-out tables of README.md and docs/validation.md, generated from the report
// `flopcast validate ../shared/groundtruth/e2e --by-source --format json` writes (a file, or
// stdin): every figure in them comes from that report, none is typed by hand. Each table sits
// between `<!-- generated: NAME -->` and `<!-- end generated -->`.
//
//   node scripts/accuracy_tables.mjs REPORT.json          rewrite the tables
//   node scripts/accuracy_tables.mjs --check REPORT.json  print the per-kind table; exit 1 where
//                                                         a committed table differs
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const check = args.includes('--check');
const input = args.find((a) => !a.startsWith('--'));

/// The report is a stream of JSON documents (the per-group table, then the leave-one-source-out
/// report): split at the top-level closing braces.
function documents(text) {
  const out = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; ++i) {
    const c = text[i];
    if (inString) {
      if (c === '\\') ++i;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && --depth === 0) {
      out.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return out;
}

const docs = documents(fs.readFileSync(input ?? 0, 'utf8'));
const loso = docs.find((d) => d.leave_one_source_out)?.leave_one_source_out;
const table = docs.find((d) => Array.isArray(d.groups));
if (!loso || !table) {
  console.error('accuracy_tables: the input is not a `validate --by-source --format json` report');
  process.exit(2);
}

const pct = (x) => (x === null || x === undefined ? '–' : (100 * x).toFixed(1));
const cover = (x) => (x === null || x === undefined ? '–' : `${Math.round(100 * x)} %`);
const width = (x) => (x === null || x === undefined ? '–' : `${x.toFixed(2)}×`);
const rows = (header, body) =>
  [header, header.replace(/[^|]+/g, (cell) => (/^ *(kind|source) *$/.test(cell) ? '---' : '---:'))]
    .concat(body)
    .join('\n');

// End-to-end rows predicted (both splits) of all the files' rows.
let predicted = 0;
for (const g of table.groups) if (g.group.startsWith('e2e/')) predicted += g.count;
let total = 0;
for (const f of table.files) if (f.format === 'e2e jsonl') total += f.rows;
const share = Math.round((100 * predicted) / total);

const kinds = rows(
  '| kind | sources | rows | left one source out | Tier 0 (physics) | 80 % band covers (unseen sources) | median band width (high/low) |',
  loso.kinds.map(
    (k) =>
      `| ${k.kind} | ${k.sources} | ${k.rows} | **${pct(k.median_ape)} %** | ${pct(k.tier0_median_ape)} % | ${cover(k.band_coverage_80)} | ${width(k.band_width_80)} |`,
  ),
);
const generated = {
  'loso-kinds': `${kinds}\n\nEnd-to-end rows predicted: ${predicted} of ${total} (${share} %); the validator names the reason for each row it skips.`,
  'loso-sources': rows(
    '| kind | source | rows | leave-one-source-out | Tier 0 | in-source default | band coverage | band width |',
    loso.sources.map(
      (s) =>
        `| ${s.kind} | ${s.source} | ${s.rows} | ${pct(s.median_ape)} | ${pct(s.tier0_median_ape)} | ${pct(s.default_median_ape)} | ${cover(s.band_coverage_80)} | ${width(s.band_width_80)} |`,
    ),
  ),
};

let stale = 0;
for (const file of ['README.md', 'docs/validation.md']) {
  const full = path.join(root, file);
  const before = fs.readFileSync(full, 'utf8');
  const after = before.replace(
    /(<!-- generated: ([a-z-]+) -->)[\s\S]*?(<!-- end generated -->)/g,
    (all, open, name, close) =>
      name in generated ? `${open}\n${generated[name]}\n${close}` : all,
  );
  if (after === before) continue;
  if (check) {
    console.error(`accuracy_tables: ${file} differs from the report (run scripts/accuracy_tables.mjs)`);
    ++stale;
  } else {
    fs.writeFileSync(full, after);
    console.log(`accuracy_tables: rewrote ${file}`);
  }
}
if (check) console.log(generated['loso-kinds']);
process.exit(stale ? 1 : 0);
