#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// Writes presets/energy/ml-energy-leaderboard-v3.jsonl: the ML.ENERGY leaderboard's measured GPU
// power, energy per output token and output throughput, in flopcast's documented row schema (docs/validation.md),
// so that `flopcast validate presets/energy/ml-energy-leaderboard-v3.jsonl` checks the power
// model. Validation only: nothing in flopcast is fitted on these rows.
//
//   git clone https://github.com/ml-energy/leaderboard && cd leaderboard && git checkout COMMIT
//   node scripts/ml_energy_rows.mjs path/to/leaderboard COMMIT > presets/energy/ml-energy-leaderboard-v3.jsonl
//
// Kept: the LM Arena chat task (prompts from lmarena-ai/arena-human-preference-100k, vLLM, steady
// state at max_num_seqs) for every model flopcast has a preset of, tensor-parallel layouts only
// (data-parallel and expert-parallel runs have no single-replica static batch to map to).
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const [root, commit] = process.argv.slice(2);
if (!root || !/^[0-9a-f]{40}$/.test(commit ?? '')) {
  console.error('usage: ml_energy_rows.mjs LEADERBOARD_DIR COMMIT(40 hex)');
  process.exit(2);
}
const dir = join(root, 'public/data/models');
const presetModels = [
  'meta-llama/Llama-3.1-8B-Instruct',
  'meta-llama/Llama-3.1-70B-Instruct',
  'meta-llama/Llama-3.3-70B-Instruct',
  'meta-llama/Llama-3.1-405B-Instruct',
  'meta-llama/Llama-3.1-405B-Instruct-FP8',
  'Qwen/Qwen3-8B',
  'Qwen/Qwen3-14B',
  'Qwen/Qwen3-32B',
  'Qwen/Qwen3-30B-A3B-Instruct-2507',
  'Qwen/Qwen3-235B-A22B-Instruct-2507',
  'Qwen/Qwen3-235B-A22B-Instruct-2507-FP8',
  'google/gemma-3-12b-it',
  'google/gemma-3-27b-it',
  'meta-llama/Llama-4-Scout-17B-16E-Instruct',
  'meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8',
];
const gpuName = { H100: 'H100-SXM-80G', B200: 'B200' };
const round3 = (x) => Math.round(x * 1e3) / 1e3;
const round6 = (x) => Math.round(x * 1e6) / 1e6;

for (const file of readdirSync(dir).sort()) {
  if (!file.endsWith('__lm-arena-chat.json')) continue;
  const d = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  if (!presetModels.includes(d.model_id)) continue;
  const dtype = d.weight_precision === 'bfloat16' ? 'BF16' : d.weight_precision.toUpperCase();
  for (const c of d.configurations) {
    const par = c.parallelization;
    if (par.data_parallel !== 1 || par.expert_parallel !== 1 || !gpuName[c.gpu_model]) continue;
    const base = `${d.model_id.split('/')[1]}-${c.gpu_model}-tp${par.tensor_parallel}-seqs${c.max_num_seqs}`;
    const common = {
      kind: 'inference',
      tier: 'core',
      group: 'ml-energy-leaderboard-v3',
      source: { repo: 'ml-energy/leaderboard', path: `public/data/models/${file}`, commit },
      model: d.model_id,
      gpu: gpuName[c.gpu_model],
      num_gpus: c.num_gpus,
      parallelism: { tp: par.tensor_parallel },
      dtype,
      workload: {
        engine: 'vLLM (ML.ENERGY benchmark, 2025-2026 releases)',
        dataset: 'lm-arena-chat',
        max_num_seqs: c.max_num_seqs,
        batch: Math.max(1, Math.round(c.avg_batch_size)),
        input_len: 512,
        output_len: Math.max(2, Math.round(c.avg_output_len)),
      },
      related: {
        avg_batch_size: round3(c.avg_batch_size),
        output_tokens_per_s: round3(c.output_throughput_tokens_per_sec),
        median_itl_ms: round3(c.median_itl_ms),
      },
      derived: ['workload.batch', 'workload.input_len', 'workload.output_len'],
      notes:
        'Steady-state GPU power (Zeus) while vLLM serves at max_num_seqs; batch and output_len are the ' +
        "run's mean batch and mean output length, rounded; input_len is not published per run and is " +
        'assumed (LM Arena chat prompts are short next to the outputs).',
    };
    const row = (metric, value, unit) => ({ id: `mlenergy-${base}-${metric}`, ...common, metric, value, unit });
    console.log(JSON.stringify(row('power_W', round3(c.avg_power_watts), 'W (all GPUs of the run)')));
    console.log(
      JSON.stringify(row('joules_per_output_token', round6(c.energy_per_token_joules), 'J/token')),
    );
    // The throughput the energy per token divides by: it separates a power error from a speed one.
    console.log(
      JSON.stringify(row('output_tokens_per_s', round3(c.output_throughput_tokens_per_sec), 'tokens/s (whole run)')),
    );
  }
}
