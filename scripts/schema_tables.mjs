#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// The request-field tables of docs/schema.md, generated from the registry
// (core/io/src/fields.cpp) as `flopcast presets schema --docs` prints it: each table sits between
// `<!-- generated: fields TASK [only] -->` and `<!-- end generated -->` and lists the fields TASK
// reads (with `only`: those no other task reads), in registry order.
//
//   node scripts/schema_tables.mjs [--cli PATH]          rewrite the tables
//   node scripts/schema_tables.mjs --check [--cli PATH]  exit 1 where a committed table differs
// PATH defaults to build/native-release/cli/flopcast.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const check = args.includes('--check');
const cliAt = args.indexOf('--cli');
const cli = cliAt >= 0 ? args[cliAt + 1] : path.join(root, 'build/native-release/cli/flopcast');

const schema = JSON.parse(execFileSync(cli, ['presets', 'schema', '--docs'], { encoding: 'utf8' }));
const TYPES = { integer: 'int', number: 'number', boolean: 'bool', string: 'string', 'integer or distribution': 'int or object',
  array: 'array' };

function valuesOf(field) {
  if (!field.choices) return [];
  const [group, key] = field.choices.split('.');
  return schema[group][key];
}

function row(field) {
  const type = (TYPES[field.type] ?? field.type) + (field.unit ? ` (${field.unit})` : '');
  let meaning = field.doc;
  const values = valuesOf(field);
  if (values.length) meaning += `. Values: ${values.map((v) => `\`${v}\``).join(', ')}`;
  if (field.flag) meaning += `. CLI: \`${field.flag}\``;
  return `| \`${field.path}\` | ${type} | ${field.default} | ${meaning} |`;
}

function table(task, only) {
  const fields = schema.fields.filter((f) => f.tasks.includes(task) && (!only || f.tasks.length === 1));
  if (!fields.length) throw new Error(`no ${task} fields`);
  return ['| key | type | default | meaning |', '|---|---|---|---|', ...fields.map(row)].join('\n');
}

const file = path.join(root, 'docs/schema.md');
const text = fs.readFileSync(file, 'utf8');
const marker = /(<!-- generated: fields (\w+)( only)? -->\n)[\s\S]*?(<!-- end generated -->)/g;
let blocks = 0;
const out = text.replace(marker, (_, open, task, only, close) => {
  ++blocks;
  return `${open}${table(task, Boolean(only))}\n${close}`;
});
if (blocks === 0) {
  console.error('schema_tables: no `<!-- generated: fields ... -->` block in docs/schema.md');
  process.exit(2);
}
if (check) {
  if (out !== text) {
    console.error(
      'schema_tables: docs/schema.md differs from the field registry; run node scripts/schema_tables.mjs',
    );
    process.exit(1);
  }
  console.log(`schema_tables: ${blocks} field tables of docs/schema.md match the registry`);
} else {
  fs.writeFileSync(file, out);
  console.log(`schema_tables: wrote ${blocks} field tables of docs/schema.md`);
}
