// SPDX-License-Identifier: MIT
// Native CLI vs WebAssembly module: the same request must give the same JSON, value for value,
// and the same error for a bad request.
//   FLOPCAST_CLI=build/native-release/cli/flopcast FLOPCAST_SITE_DIR=build/wasm-release/site \
//     node --test tests/parity/parity.test.mjs
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadFlopcast, repoRoot, siteDir } from '../wasm/load_module.mjs';
const cli = path.resolve(process.env.FLOPCAST_CLI ?? path.join(repoRoot, 'build/native-release/cli/flopcast'));

/** The CLI's answer to one request: {ok, result} or {ok: false, error} and its exit code. */
function runCli(request) {
  const p = spawnSync(cli, ['estimate', '--request', '-', '--format', 'json'], {
    input: typeof request === 'string' ? request : JSON.stringify(request),
    encoding: 'utf8',
  });
  assert.equal(p.error, undefined, `cannot run ${cli}: ${p.error}`);
  const out = JSON.parse(p.stdout);
  if (p.status === 0) return { status: p.status, envelope: { ok: true, result: out }, stderr: p.stderr };
  return { status: p.status, envelope: out, stderr: p.stderr };
}

const base = {
  task: 'inference',
  model: 'llama-2-7b',
  hardware: 'a100-sxm-80g',
  num_gpus: 1,
  parallelism: { tp: 1 },
  precision: { weights: 'bf16', kv_cache: 'bf16' },
  workload: { prompt_tokens: 128, output_tokens: 128, batch_size: 1 },
};
const tiny = {
  name: 'tiny custom',
  num_layers: 4,
  hidden_size: 512,
  num_heads: 8,
  num_kv_heads: 2,
  intermediate_size: 1376,
  vocab_size: 32000,
  max_context_tokens: 8192,
  qkv_bias: true,
};

const varied = {
  'tp 2': { ...base, model: 'llama-2-13b', num_gpus: 2, parallelism: { tp: 2 } },
  'tp 4 with 2 replicas': { ...base, model: 'llama-2-70b', hardware: 'h100-sxm', num_gpus: 8, parallelism: { tp: 4 } },
  'tp 8': {
    ...base,
    model: 'llama-3.1-405b',
    hardware: 'h200-sxm',
    num_gpus: 8,
    parallelism: { tp: 8 },
    precision: { weights: 'fp8', kv_cache: 'fp8' },
  },
  'fp8 on h100-sxm': { ...base, hardware: 'h100-sxm', precision: { weights: 'fp8', kv_cache: 'fp8' } },
  'fp8 weight-only on a100 (fp8 marlin)': { ...base, precision: { weights: 'fp8' } },
  'int4 weights': { ...base, model: 'llama-3-70b', precision: { weights: 'int4' } },
  'gguf q4_k_m on an m3 max': {
    ...base,
    model: 'llama-3.1-8b',
    hardware: 'm3-max',
    precision: { weights: 'q4_k_m', kv_cache: 'fp16' },
  },
  'int8 weights, fp16 on t4': {
    ...base,
    model: 'mistral-7b',
    hardware: 't4',
    precision: { weights: 'int8' },
    workload: { prompt_tokens: 512, output_tokens: 64, batch_size: 2 },
  },
  'tp 16 across two nodes': {
    ...base,
    model: 'llama-3.1-405b',
    hardware: 'h100-sxm',
    num_gpus: 16,
    parallelism: { tp: 16 },
    workload: { prompt_tokens: 2000, output_tokens: 200, batch_size: 16 },
  },
  'deepseek dp attention with ep': {
    ...base,
    model: 'deepseek-r1',
    hardware: 'h200-sxm',
    num_gpus: 8,
    parallelism: { tp: 8, ep: 8, dp_attention: true },
    precision: { weights: 'fp8' },
    workload: { prompt_tokens: 3000, output_tokens: 500, batch_size: 64 },
  },
  'deepseek attention in groups of two': {
    ...base,
    model: 'deepseek-r1',
    hardware: 'h200-sxm',
    num_gpus: 8,
    parallelism: { tp: 8, ep: 8, dp_attention: true, attention_tp: 2 },
    precision: { weights: 'fp8' },
    workload: { prompt_tokens: 3000, output_tokens: 500, batch_size: 64 },
  },
  'deepseek wide ep over four nodes, all-to-all dispatch': {
    ...base,
    model: 'deepseek-r1',
    hardware: 'h100-sxm',
    num_gpus: 32,
    parallelism: { tp: 32, ep: 32, dp_attention: true },
    precision: { weights: 'fp8' },
    workload: { prompt_tokens: 2000, output_tokens: 500, batch_size: 1024 },
  },
  'mixtral tp 2': {
    ...base,
    model: 'mixtral-8x7b',
    hardware: 'h100-sxm',
    num_gpus: 2,
    parallelism: { tp: 2 },
    workload: { prompt_tokens: 1024, output_tokens: 256, batch_size: 16 },
  },
  'custom model object': { ...base, model: tiny, workload: { prompt_tokens: 2000, output_tokens: 100, batch_size: 3 } },
  'what-if hardware (2x bandwidth, 1.5x compute) with mxfp8 weights': {
    ...base,
    model: 'llama-3.1-8b',
    hardware: { preset: 'b200', scale: { hbm_bandwidth: 2, compute: 1.5 } },
    precision: { weights: 'mxfp8' },
  },
  'custom hardware object': {
    ...base,
    hardware: {
      name: 'Test accelerator',
      vendor: 'amd',
      dense_peak_TFLOPS: { bf16: 400, fp16: 400, fp8: 800 },
      hbm_GB: 192,
      hbm_bandwidth_GBps: 5300,
      num_sms: 304,
      scaleup_bandwidth_GBps: 448,
      scaleup_latency_us: 10,
      gpus_per_node: 8,
    },
  },
  'batch 64': { ...base, workload: { prompt_tokens: 1000, output_tokens: 1000, batch_size: 64 } },
  'output 1': { ...base, workload: { prompt_tokens: 3000, output_tokens: 1, batch_size: 1 } },
  'does not fit': {
    ...base,
    model: 'llama-2-70b',
    workload: { prompt_tokens: 4000, output_tokens: 96, batch_size: 32 },
  },
  'engine settings': {
    ...base,
    engine: { gpu_memory_utilization: 0.8, kv_block_tokens: 32, step_overhead_us: 0, framework_reserve_GB: 0.5 },
  },
  'odd numbers': {
    ...base,
    model: 'qwen2.5-7b',
    hardware: 'l40s',
    workload: { prompt_tokens: 1237, output_tokens: 333, batch_size: 7 },
  },
};

const invalid = {
  'tp 3': { ...base, num_gpus: 3, parallelism: { tp: 3 } },
  'unknown model': { ...base, model: 'llama-2-7' },
  'unknown key': { ...base, worklaod: {} },
  'negative batch': { ...base, workload: { prompt_tokens: 128, output_tokens: 128, batch_size: -1 } },
  'fp8 on mi250x': { ...base, hardware: 'mi250x', precision: { weights: 'fp8' } },
  'tp across nodes without a network': { ...base, hardware: 'l40s', num_gpus: 16, parallelism: { tp: 16 } },
  'ep on a dense model': { ...base, num_gpus: 2, parallelism: { tp: 2, ep: 2 } },
  'context too long': { ...base, workload: { prompt_tokens: 4096, output_tokens: 1 } },
  'sliding window of 0 tokens': { ...base, model: { ...tiny, sliding_window_tokens: 0 } },
  'not an object': [1, 2, 3],
};

let M;
let scenarios = [];
before(async () => {
  assert.ok(existsSync(cli), `native CLI not found at ${cli} (set FLOPCAST_CLI)`);
  M = await loadFlopcast(siteDir);
  const presets = JSON.parse(M.presets());
  assert.equal(presets.ok, true);
  scenarios = presets.result.scenarios;
});

function wasmEstimate(request) {
  return JSON.parse(M.estimate(typeof request === 'string' ? request : JSON.stringify(request)));
}

function assertParity(request, label) {
  const native = runCli(request);
  const wasm = wasmEstimate(request);
  assert.equal(native.envelope.ok, wasm.ok, `${label}: ok differs (${native.stderr})`);
  if (wasm.ok) {
    assert.equal(native.status, 0, label);
    assert.deepStrictEqual(native.envelope.result, wasm.result, label);
    for (const key of ['ttft_ms', 'tpot_ms', 'e2e_ms']) {
      assert.ok(Number.isFinite(wasm.result[key]) && wasm.result[key] > 0, `${label}: ${key}`);
    }
  } else {
    assert.equal(native.status, 3, `${label}: exit code`);
    assert.deepStrictEqual(native.envelope.error, wasm.error, label);
    assert.equal(native.stderr, `flopcast: error: ${wasm.error.message}\n`, label);
  }
  return wasm;
}

test('every scenario preset: native and wasm agree', () => {
  assert.equal(scenarios.length, 10);
  for (const s of scenarios) {
    const out = assertParity(s.request, `scenario ${s.id}`);
    assert.equal(out.ok, true, `scenario ${s.id} runs`);
  }
});

for (const [label, request] of Object.entries(varied)) {
  test(`varied request: ${label}`, () => {
    const out = assertParity(request, label);
    assert.equal(out.ok, true, `${label} runs: ${JSON.stringify(out.error)}`);
  });
}

for (const [label, request] of Object.entries(invalid)) {
  test(`invalid request: ${label}`, () => {
    const out = assertParity(request, label);
    assert.equal(out.ok, false, `${label} fails`);
  });
}

test('every model preset on h100-sxm: native and wasm agree', () => {
  const models = JSON.parse(M.presets()).result.models;
  for (const m of models) {
    const tp = m.model.num_heads % 8 === 0 && m.model.intermediate_size % 8 === 0 ? 8 : 4;
    const req = {
      ...base,
      model: m.id,
      hardware: 'h100-sxm',
      num_gpus: tp,
      parallelism: { tp },
      workload: { prompt_tokens: 1000, output_tokens: 200, batch_size: 4 },
    };
    assertParity(req, `model ${m.id}`);
  }
});

// The other tasks through the same entry point: identical JSON, simulator included (its samplers
// are flopcast's own, so a seed gives the same requests natively and in WebAssembly).
const otherTasks = {
  'training, hybrid Mamba-2 + MoE model (Nemotron 3 Nano), expert parallel, mxfp8': {
    task: 'training',
    model: 'nemotron-3-nano-30b-a3b',
    hardware: 'b200',
    num_gpus: 8,
    parallelism: { ep: 8 },
    precision: { compute: 'mxfp8' },
    workload: { seq_len: 8192, global_batch_size: 512, micro_batch_size: 2 },
  },
  'training, fsdp with micro-batch search': {
    task: 'training',
    model: 'llama-3-8b',
    hardware: 'h100-sxm',
    num_gpus: 64,
    gpus_per_node: 8,
    parallelism: { fsdp: 'full_shard' },
    workload: { seq_len: 8192, global_batch_size: 512, total_tokens: 1e12 },
  },
  'training, tp pp interleaved with selective recompute': {
    task: 'training',
    model: 'llama-2-70b',
    hardware: 'a100-sxm-80g',
    num_gpus: 64,
    parallelism: { tp: 8, pp: 4, dp: 2, sp: true, vpp: 2, zero: 1 },
    workload: { seq_len: 4096, global_batch_size: 256, micro_batch_size: 1, recompute: 'selective' },
  },
  'training, nvfp4 with a bf16 tail on gb200': {
    task: 'training',
    model: 'llama-3-8b',
    hardware: 'gb200',
    num_gpus: 4,
    parallelism: { fsdp: 'full_shard' },
    precision: { compute: 'fp4', bf16_last_layers: 5 },
    workload: { seq_len: 2048, global_batch_size: 128, micro_batch_size: 32, recompute: 'selective' },
  },
  'training, mxfp8 on gb200': {
    task: 'training',
    model: 'qwen3-8b',
    hardware: 'gb200',
    num_gpus: 4,
    parallelism: { fsdp: 'full_shard' },
    precision: { compute: 'mxfp8' },
    workload: { seq_len: 2048, global_batch_size: 128, micro_batch_size: 32, recompute: 'selective' },
  },
  'training, deepseek-v3 with its mtp module on a pipeline': {
    task: 'training',
    model: 'deepseek-v3',
    hardware: 'h200-sxm',
    num_gpus: 256,
    parallelism: { pp: 8, ep: 32, zero: 1 },
    precision: { compute: 'fp8' },
    workload: { seq_len: 4096, global_batch_size: 1024, micro_batch_size: 1 },
  },
  'training, qlora': {
    task: 'training',
    model: 'llama-2-70b',
    hardware: 'a100-sxm-80g',
    num_gpus: 1,
    lora: { method: 'qlora', rank: 16 },
    workload: { seq_len: 2048, global_batch_size: 16 },
  },
  'serving, analytic': {
    task: 'serving',
    model: 'llama-2-7b',
    hardware: 'a100-sxm-80g',
    workload: { arrival: { kind: 'poisson', rate_per_s: 4 }, prompt_tokens: 512, output_tokens: 128 },
  },
  'serving, simulate with bursts, log-normal lengths and prefix caching': {
    task: 'serving',
    mode: 'simulate',
    model: 'llama-3-8b',
    hardware: 'h100-sxm',
    workload: {
      arrival: { kind: 'gamma', rate_per_s: 12, cv: 2 },
      prompt_tokens: { kind: 'lognormal', mean: 800, sigma: 0.8 },
      output_tokens: { kind: 'uniform', min: 32, max: 512 },
      num_requests: 800,
      seed: 7,
    },
    features: { prefix_caching: { shared_prefix_tokens: 256 } },
  },
  'serving, simulate a hybrid Mamba-2 model (Nemotron 3 Nano), its state held in KV blocks': {
    task: 'serving',
    mode: 'simulate',
    model: 'nemotron-3-nano-30b-a3b',
    hardware: 'h200-sxm',
    engine: { gpu_memory_utilization: 0.5 },
    workload: {
      arrival: { kind: 'poisson', rate_per_s: 20 },
      prompt_tokens: { kind: 'lognormal', mean: 2000, sigma: 0.6 },
      output_tokens: 256,
      num_requests: 400,
    },
  },
  'serving, simulate mixtral with expert parallelism': {
    task: 'serving',
    mode: 'simulate',
    model: 'mixtral-8x7b',
    hardware: 'a100-sxm-80g',
    num_gpus: 2,
    parallelism: { tp: 2 },
    workload: {
      arrival: { kind: 'poisson', rate_per_s: 3 },
      prompt_tokens: 512,
      output_tokens: 128,
      num_requests: 300,
    },
    features: { moe: { expert_parallel: true, imbalance_factor: 1.2 } },
  },
  'serving, simulate deepseek-r1 with dp attention, ep and an mtp draft': {
    task: 'serving',
    mode: 'simulate',
    model: 'deepseek-r1',
    hardware: 'h200-sxm',
    num_gpus: 8,
    parallelism: { tp: 8, ep: 8, dp_attention: true },
    precision: { weights: 'fp8' },
    workload: {
      arrival: { kind: 'poisson', rate_per_s: 2 },
      prompt_tokens: 2000,
      output_tokens: 400,
      num_requests: 200,
    },
    features: { speculative: { num_tokens: 2, acceptance_rate: 0.8, draft: 'mtp' } },
  },
  'search, training layouts of mixtral with experts': {
    task: 'search',
    model: 'mixtral-8x7b',
    hardware: 'h100-sxm',
    num_gpus: 16,
    search: { target: 'training', top: 5 },
    workload: { seq_len: 4096, global_batch_size: 256 },
  },
  'search, serving setups of llama-3.1-70b on 8 h100 under slos': {
    task: 'search',
    model: 'llama-3.1-70b',
    hardware: 'h100-sxm',
    num_gpus: 8,
    search: { target: 'serving', top: 5 },
    workload: { arrival: { kind: 'poisson', rate_per_s: 10 }, prompt_tokens: 1024, output_tokens: 256 },
    slo: { ttft_ms: 500, tpot_ms: 50 },
  },
  'serving, analytic disaggregated pools with log-normal lengths and bursts': {
    task: 'serving',
    model: 'llama-3.1-8b',
    hardware: 'h100-sxm',
    num_gpus: 3,
    workload: {
      arrival: { kind: 'gamma', rate_per_s: 10, cv: 2 },
      prompt_tokens: { kind: 'lognormal', mean: 2000, sigma: 0.8 },
      output_tokens: { kind: 'lognormal', mean: 300, sigma: 0.8 },
    },
    features: { disaggregated: { prefill_instances: 1, decode_instances: 2, kv_link_GBps: 100 } },
  },
  'search, serving setups with disaggregated splits': {
    task: 'search',
    model: 'llama-3.1-8b',
    hardware: 'h100-sxm',
    num_gpus: 4,
    search: { target: 'serving', top: 5, disaggregated: [false, true] },
    workload: { arrival: { kind: 'poisson', rate_per_s: 20 }, prompt_tokens: 2048, output_tokens: 256 },
    slo: { tpot_ms: 9 },
  },
  'search, every gpu type for llama-3.1-70b in fp8': {
    task: 'search',
    model: 'llama-3.1-70b',
    precision: { weights: 'fp8' },
    search: { target: 'hardware' },
    workload: { prompt_tokens: 1000, output_tokens: 200, batch_size: 32 },
  },
  'collective, all-reduce across nodes': {
    task: 'collective',
    hardware: 'h100-sxm',
    collective: { op: 'all_reduce', bytes: 67108864, ranks: 16 },
  },
};
for (const [label, request] of Object.entries(otherTasks)) {
  test(`${request.task}: ${label}`, () => {
    const native = runCli(request);
    const wasm = wasmEstimate(request);
    assert.equal(wasm.ok, true, `${label}: ${JSON.stringify(wasm.error)}`);
    assert.equal(native.status, 0, `${label}: ${native.stderr}`);
    assert.deepStrictEqual(native.envelope.result, wasm.result, label);
  });
}

// A generated set of every task (issue 12): seeded random requests drawn as a user would, each
// through the native CLI and the WASM module, compared value for value, errors included.
function generator(seed) {
  let x = seed >>> 0;
  const next = () => {
    // mulberry32
    x = (x + 0x6d2b79f5) >>> 0;
    let t = x;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = (list) => list[int(0, list.length - 1)];
  return { next, int, pick };
}
const models = [
  'llama-3.2-1b',
  'llama-3.1-8b',
  'qwen3-8b',
  'qwen3-30b-a3b',
  'mixtral-8x7b',
  'gpt-oss-20b',
  'gemma-3-4b',
  'mistral-7b',
  'llama-3.1-70b',
  'deepseek-v3',
];
const gpus = ['h100-sxm', 'h200-sxm', 'b200', 'a100-sxm-80g', 'l40s', 'mi300x', 'rtx-4090'];
const generated = {
  inference: (g) => {
    const tp = 2 ** g.int(0, 3);
    return {
      task: 'inference',
      model: g.pick(models),
      hardware: g.pick(gpus),
      num_gpus: tp,
      parallelism: { tp },
      precision: { weights: g.pick(['bf16', 'fp8', 'int4']) },
      workload: { prompt_tokens: g.int(1, 8000), output_tokens: g.int(1, 2000), batch_size: g.int(1, 128) },
    };
  },
  training: (g) => {
    const tp = 2 ** g.int(0, 3),
      dp = 2 ** g.int(0, 4);
    return {
      task: 'training',
      model: g.pick(models),
      hardware: g.pick(gpus),
      num_gpus: tp * dp,
      parallelism: { tp, fsdp: 'full_shard' },
      workload: {
        seq_len: 2 ** g.int(10, 14),
        global_batch_size: dp * g.int(1, 8),
        recompute: g.pick(['none', 'selective', 'full']),
      },
    };
  },
  serving: (g) => {
    const tp = 2 ** g.int(0, 3);
    const simulate = g.int(0, 3) === 0;
    return {
      task: 'serving',
      mode: simulate ? 'simulate' : 'analytic',
      model: g.pick(models),
      hardware: g.pick(gpus),
      num_gpus: tp,
      parallelism: { tp },
      workload: {
        arrival: { kind: g.pick(['poisson', 'gamma']), rate_per_s: 0.1 + 20 * g.next(), cv: 2 },
        prompt_tokens: { kind: 'lognormal', mean: 200 + g.int(0, 3000), sigma: 0.7 },
        output_tokens: { kind: 'uniform', min: 1, max: g.int(1, 800) },
        num_requests: simulate ? g.int(1, 80) : 1000,
        seed: g.int(1, 1000),
      },
    };
  },
  collective: (g) => ({
    task: 'collective',
    hardware: g.pick(gpus),
    collective: {
      op: g.pick(['all_reduce', 'all_gather', 'reduce_scatter', 'all_to_all']),
      bytes: Math.round(10 ** (9 * g.next())),
      ranks: g.int(1, 64),
    },
  }),
};
for (const [task, make] of Object.entries(generated)) {
  test(`generated ${task} requests: native and wasm agree`, () => {
    const g = generator(task.length * 7919);
    let ok = 0;
    for (let i = 0; i < 40; i++) {
      const request = make(g);
      const native = runCli(request);
      const wasm = wasmEstimate(request);
      const label = `${task} #${i} ${JSON.stringify(request)}`;
      assert.equal(native.envelope.ok, wasm.ok, label);
      if (wasm.ok) {
        ok++;
        assert.deepStrictEqual(native.envelope.result, wasm.result, label);
      } else {
        assert.deepStrictEqual(native.envelope.error, wasm.error, label);
      }
    }
    assert.ok(ok >= 20, `${task}: only ${ok} of 40 generated requests were valid`);
  });
}

// Issue 11: `flopcast link --request X` works for every task, and the page (the module's
// decode_link, then its estimate) gets the numbers the CLI gives for X itself.
const linked = {
  inference: varied['tp 4 with 2 replicas'],
  training: otherTasks['training, tp pp interleaved with selective recompute'],
  serving: otherTasks['serving, simulate deepseek-r1 with dp attention, ep and an mtp draft'],
  collective: otherTasks['collective, all-reduce across nodes'],
};
for (const [task, request] of Object.entries(linked)) {
  test(`link: the CLI's ${task} link opens in the module with the CLI's numbers`, () => {
    assert.equal(request?.task ?? 'inference', task);
    const p = spawnSync(cli, ['link', '--request', '-'], { input: JSON.stringify(request), encoding: 'utf8' });
    assert.equal(p.status, 0, p.stderr);
    const url = new URL(p.stdout.trim());
    const decoded = JSON.parse(M.decode_link(url.hash));
    assert.equal(decoded.ok, true, JSON.stringify(decoded.error));
    assert.deepEqual(decoded.result.errors, []);
    const page = wasmEstimate(decoded.result.request);
    assert.equal(page.ok, true, JSON.stringify(page.error));
    assert.deepStrictEqual(page.result, runCli(request).envelope.result);
  });
}
