// SPDX-License-Identifier: MIT
// Smoke test of the Embind module as the page uses it: JSON strings in, envelopes out.
//   FLOPCAST_SITE_DIR=build/wasm-release/site node --test tests/wasm/module.test.mjs
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { loadFlopcast, repoRoot } from './load_module.mjs';

const baseRequest = {
  task: 'inference',
  model: 'llama-2-7b',
  hardware: 'a100-sxm-80g',
  num_gpus: 1,
  parallelism: { tp: 1 },
  precision: { weights: 'bf16', kv_cache: 'bf16' },
  workload: { prompt_tokens: 128, output_tokens: 128, batch_size: 1 },
};

let M;
before(async () => {
  M = await loadFlopcast();
});

const call = (name, arg, ...rest) => {
  const text = arg === undefined ? M[name]() : M[name](typeof arg === 'string' ? arg : JSON.stringify(arg), ...rest);
  assert.equal(typeof text, 'string', `${name} returns a string`);
  return JSON.parse(text);
};

test("version is package.json's, the one version source", () => {
  const v = M.version();
  assert.equal(typeof v, 'string');
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8'));
  assert.equal(v, pkg.version);
  // Each landing bumps it and says what changed under its heading: the newest CHANGELOG entry is
  // this version's.
  const changelog = readFileSync(path.join(repoRoot, 'CHANGELOG.md'), 'utf8');
  const newest = /^## (\S+)/m.exec(changelog);
  assert.ok(newest, 'CHANGELOG.md has a "## <version> ..." heading');
  assert.equal(newest[1], v, 'the newest CHANGELOG heading names the current version');
});

test('estimate of the base request', () => {
  const out = call('estimate', baseRequest);
  assert.equal(out.ok, true, JSON.stringify(out.error));
  const r = out.result;
  assert.equal(r.schema_version, 1);
  assert.equal(r.model.id, 'llama-2-7b');
  for (const key of ['ttft_ms', 'tpot_ms', 'e2e_ms', 'output_tokens_per_s', 'prefill_tokens_per_s']) {
    assert.equal(typeof r[key], 'number', key);
    assert.ok(Number.isFinite(r[key]) && r[key] > 0, `${key} = ${r[key]}`);
  }
  assert.equal(r.memory.fits, true);
});

test('error envelope for tp 3', () => {
  const out = call('estimate', { ...baseRequest, num_gpus: 3, parallelism: { tp: 3 } });
  assert.equal(out.ok, false);
  assert.equal(out.error.code, 'invalid_request');
  assert.equal(out.error.path, 'parallelism.tp');
  assert.equal(out.error.message, 'parallelism.tp: must divide model.num_heads (32) (got 3)');
});

test('malformed JSON is invalid_json', () => {
  const out = call('estimate', '{"task": ');
  assert.equal(out.ok, false);
  assert.equal(out.error.code, 'invalid_json');
  assert.equal(out.error.path, '');
});

// Issue 12: ~4,830 nested levels threw a RangeError out of the module (not an envelope) and
// leaked ~300 KB a call, until every call failed. Now an invalid_json envelope, and the module
// stays healthy after thousands of them.
test('deep nesting is an invalid_json envelope, thousands of times, without a leak', () => {
  const deep = '{"task":' + '['.repeat(10000) + ']'.repeat(10000) + '}';
  for (let i = 0; i < 3000; i++) {
    const out = call('estimate', deep);
    assert.equal(out.ok, false);
    assert.equal(out.error.code, 'invalid_json');
    assert.equal(out.error.message, 'malformed JSON: nested deeper than 64 levels');
  }
  const hf = call('model_from_hf_config', '['.repeat(10000) + ']'.repeat(10000), 'config.json');
  assert.equal(hf.ok, false);
  assert.equal(hf.error.code, 'invalid_json');
  const link = call('decode_link', 'v=1&model=' + encodeURIComponent('{"a":' + '['.repeat(5000)));
  assert.equal(link.ok, true);
  assert.match(link.result.errors[0].message, /nested deeper than 64 levels/);
  assert.equal(call('estimate', baseRequest).ok, true);
});

test('presets lists one model, hardware, scenario and engine per preset file', () => {
  const out = call('presets');
  assert.equal(out.ok, true);
  const files = (kind) => readdirSync(path.join(repoRoot, 'presets', kind)).filter((f) => f.endsWith('.json')).length;
  assert.equal(out.result.models.length, files('models'));
  assert.equal(out.result.engines.length, files('engines'));
  assert.equal(out.result.hardware.length, files('hardware'));
  assert.equal(out.result.scenarios.length, files('scenarios'));
  assert.ok(out.result.models.some((m) => m.id === 'llama-2-7b'));
  assert.ok(out.result.hardware.some((h) => h.id === 'h100-sxm'));
});

// The page builds its precision, MoE-dispatch, engine and recomputation choices from schema(), the
// core's own tables (the engines: presets/engines/): 13 weight types (5 of them GGUF), 8 attention types, 5 KV-cache types, 5 training
// compute types; and the longest request or link read, 1 MiB.
test('schema gives the choice lists of the core', () => {
  const out = call('schema');
  assert.equal(out.ok, true);
  const p = out.result.precision;
  assert.equal(p.weights.length, 13);
  assert.deepEqual(p.gguf_weights, ['q4_0', 'q4_k_m', 'q5_k_m', 'q6_k', 'q8_0']);
  assert.equal(p.attention_weights.length, 8);
  assert.deepEqual(p.kv_cache, ['bf16', 'fp16', 'fp8', 'int8', 'fp4']);
  assert.deepEqual(p.compute, ['bf16', 'fp16', 'fp8', 'mxfp8', 'fp4']);
  assert.deepEqual(out.result.parallelism.moe_dispatch, ['all_reduce', 'all_to_all']);
  assert.deepEqual(out.result.engine.name, ['generic', 'sglang', 'trtllm', 'vllm']);
  assert.deepEqual(out.result.workload.recompute, ['none', 'selective', 'op', 'full']);
  assert.deepEqual(out.result.limits, { request_bytes: 1048576, what_if_scale: [0.01, 100] });
  assert.deepEqual(out.result.hardware.scale, [
    'compute',
    'hbm_bandwidth',
    'hbm_capacity',
    'scaleup_bandwidth',
    'scaleout_bandwidth',
  ]);
  // The request-field registry: every field once per task, with its type (tests/unit/fields_test).
  const fields = out.result.fields;
  const kv = fields.find((f) => f.path === 'precision.kv_cache');
  assert.deepEqual(kv, {
    path: 'precision.kv_cache',
    type: 'string',
    tasks: ['inference', 'serving'],
    flag: '--kv-cache',
    choices: 'precision.kv_cache',
  });
  assert.equal(fields.find((f) => f.path === 'workload.arrival.rate_per_s').unit, 'requests/s');
  // Every listed weight type is one a request may name: an estimate with it is no bad-value error.
  for (const w of p.weights) {
    const r = call('estimate', { ...baseRequest, precision: { weights: w } });
    assert.ok(r.ok || !/precision.weights: must be one of/.test(r.error.message), `${w}: ${JSON.stringify(r.error)}`);
  }
});

// The page's message-size field reads sizes as the CLI's --bytes does: 64 MiB = 64 * 2^20.
test('parse_size reads a size with its unit', () => {
  assert.deepEqual(call('parse_size', '64MiB'), { ok: true, result: 67108864 });
  assert.deepEqual(call('parse_size', '1.5GB'), { ok: true, result: 1.5e9 });
  assert.deepEqual(call('parse_size', '4096'), { ok: true, result: 4096 });
  const bad = call('parse_size', '64XB');
  assert.equal(bad.ok, false);
  assert.match(bad.error.message, /unknown size unit "XB"; use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB/);
});

test('link round trip', () => {
  const enc = call('encode_link', baseRequest);
  assert.equal(enc.ok, true);
  assert.match(enc.result, /^v=1&/);
  assert.match(enc.result, /model=llama-2-7b/);
  const dec = call('decode_link', '#' + enc.result);
  assert.equal(dec.ok, true);
  assert.deepEqual(dec.result.errors, []);
  assert.deepEqual(dec.result.request, baseRequest);
});

test('decode_link reports a bad field and keeps the rest', () => {
  const dec = call(
    'decode_link',
    'v=1&task=inference&model=llama-2-7b&hardware=a100-sxm-80g&parallelism.tp=3&' +
      'workload.prompt_tokens=128&workload.output_tokens=128',
  );
  assert.equal(dec.ok, true);
  assert.equal(dec.result.errors.length, 1);
  assert.equal(dec.result.errors[0].path, 'parallelism.tp');
  assert.equal(dec.result.request.model, 'llama-2-7b');
  assert.equal(dec.result.request.workload.prompt_tokens, 128);
});

test('encode_link of malformed JSON is an error envelope', () => {
  const out = call('encode_link', '{oops');
  assert.equal(out.ok, false);
  assert.equal(out.error.code, 'invalid_json');
});

test('model_from_hf_config', () => {
  const config = {
    architectures: ['LlamaForCausalLM'],
    hidden_size: 4096,
    intermediate_size: 11008,
    max_position_embeddings: 4096,
    model_type: 'llama',
    num_attention_heads: 32,
    num_hidden_layers: 32,
    num_key_value_heads: 32,
    rms_norm_eps: 1e-5,
    tie_word_embeddings: false,
    vocab_size: 32000,
  };
  const out = call('model_from_hf_config', config, 'uploads/my-llama.json');
  assert.equal(out.ok, true, JSON.stringify(out.error));
  assert.equal(out.result.num_layers, 32);
  assert.equal(out.result.hidden_size, 4096);
  assert.equal(out.result.ffn, 'gated');
  assert.equal(out.result.name, 'my-llama'); // no _name_or_path: the file's name
  const byConfig = call('estimate', { ...baseRequest, model: out.result });
  const byId = call('estimate', baseRequest);
  assert.equal(byConfig.result.ttft_ms, byId.result.ttft_ms);

  const bad = call('model_from_hf_config', { ...config, hidden_size: undefined }, '');
  assert.equal(bad.ok, false);
  assert.equal(bad.error.path, 'hf_config.hidden_size');
  const notJson = call('model_from_hf_config', 'not json', '');
  assert.equal(notJson.ok, false);
  assert.equal(notJson.error.code, 'invalid_json');
});
