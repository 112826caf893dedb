// flopcast web calculator.
//
// Plain ES module, no build step, no dependencies. All numbers come from the
// flopcast WebAssembly module (flopcast.mjs + flopcast.wasm, served beside this
// file); this file only builds the request document from the form, renders the
// result document, and maps error paths back to form fields.
//
// The DOM is built with createElement/createElementNS/textContent only.

'use strict';

import * as views from './views.js';
import { Form } from './form.js';
import { WhatIf } from './what-if.js';
import {
  announceHeadline,
  bandNote,
  energyText,
  costText,
  $,
  CUSTOM,
  DISPATCH_LABELS,
  call,
  clone,
  compileModule,
  el,
  fmtGB,
  fmtInt,
  fmtNum,
  fmtPct,
  fmtSI,
  followLink,
  GGUF_TYPES,
  hardwareOptions,
  isPlainObject,
  lineChart,
  loadSchema,
  moduleOptions,
  Pin,
  schemaList,
  svg,
  WEIGHT_TYPES,
  yAxisLabel,
  showVerdict,
  searchPanel,
  runSearch,
  fillCandidates,
  showSearchStaleness,
  fmtMs,
} from './ui.js';

const DEFAULT_REQUEST = Object.freeze({
  task: 'inference',
  model: 'llama-3.1-8b',
  hardware: 'h100-sxm',
  num_gpus: 1,
  parallelism: { tp: 1, pp: 1, ep: 1, dp_attention: false },
  precision: { kv_cache: 'bf16' },
  workload: { prompt_tokens: 128, output_tokens: 128, batch_size: 1 },
  engine: { name: 'generic', gpu_memory_utilization: 0.9 },
});

// The setup's inputs (index.html), in form.js's field table: key = element id.
const FIELDS = [
  // A Hugging Face config's errors (`hf_config.*`) belong to the custom model box.
  { key: 'model', path: 'model', kind: 'spec', owns: ['hf_config'] },
  { key: 'hardware', path: 'hardware', kind: 'spec' },
  { key: 'num_gpus', path: 'num_gpus', kind: 'int' },
  // Errors about the layout as a whole (`parallelism`) show beside TP.
  { key: 'tp', path: 'parallelism.tp', kind: 'int', owns: ['parallelism'] },
  // One stage is the default: left out of the request (and the link) as the core's default.
  { key: 'pp', path: 'parallelism.pp', kind: 'int', omitIf: 1 },
  { key: 'ep', path: 'parallelism.ep', kind: 'int', omitIf: 1 },
  // A yes/no select: only `true` goes into the request (false is the core's default).
  { key: 'dp_attention', path: 'parallelism.dp_attention', kind: 'bool', omitIf: false },
  // Empty or 1: one-GPU attention groups (the core's default); SGLang's --tp-size / --dp-size.
  { key: 'attention_tp', path: 'parallelism.attention_tp', kind: 'int', optional: true, omitIf: 1 },
  // Empty ("by layout") leaves the key out: all-to-all where DP attention with EP = TP spans nodes.
  { key: 'moe_dispatch', path: 'parallelism.moe_dispatch', kind: 'choice', optional: true },
  // Empty or 0: no replicas (the core's default).
  { key: 'redundant_experts', path: 'parallelism.redundant_experts', kind: 'int', optional: true, omitIf: 0 },
  // Empty ("as published") leaves the key out: the model's checkpoint type (model.checkpoint_weights:
  // DeepSeek-V3/R1 fp8, gpt-oss mxfp4), else bf16, as the core decides.
  { key: 'weights', path: 'precision.weights', kind: 'choice', optional: true },
  // Empty ("same as weights") leaves the key out: the core's default.
  { key: 'attention_weights', path: 'precision.attention_weights', kind: 'choice', optional: true },
  { key: 'kv_cache', path: 'precision.kv_cache', kind: 'choice' },
  { key: 'prompt_tokens', path: 'workload.prompt_tokens', kind: 'int' },
  { key: 'output_tokens', path: 'workload.output_tokens', kind: 'int' },
  { key: 'batch_size', path: 'workload.batch_size', kind: 'int' },
  // The core's default profile ("generic") is left out of the request (and the link).
  { key: 'engine', path: 'engine.name', kind: 'choice', omitIf: 'generic' },
  { key: 'gpu_memory_utilization', path: 'engine.gpu_memory_utilization', kind: 'num' },
  // Optional: empty leaves the price (and the cost) out.
  { key: 'cost_per_gpu_hour_usd', path: 'cost_per_gpu_hour_usd', kind: 'num', optional: true },
];

const OP_LABELS = {
  embedding: 'Embedding',
  qkv_proj: 'QKV projection',
  attention: 'Attention',
  o_proj: 'Output projection',
  mlp: 'MLP',
  moe_router: 'MoE router',
  moe_experts: 'MoE experts',
  moe_all_to_all: 'MoE all-to-all',
  norm_elementwise: 'Norms & elementwise',
  lm_head: 'LM head',
  tp_allreduce: 'TP all-reduce',
  tp_comm: 'TP communication',
  engine_overhead: 'Engine overhead',
};
const BOUND_LABELS = {
  compute: 'compute',
  memory: 'memory',
  communication: 'comm.',
  overhead: 'overhead',
};
/**
 * A setup that does not fit in memory has no latency: its headline numbers would describe memory
 * the GPUs do not have, so the verdict and what would make it fit replace them.
 */
function renderVerdict(mem) {
  if (mem.fits !== false) {
    showVerdict('unfit-verdict', null, 'headline');
    return;
  }
  // The module says what is missing and what would make it fit (memory.short_GB, to_fit), and
  // gives each way out as a request fragment (ways_to_fit): a button applies it.
  const short = mem.short_GB > 0 ? ` — short by ${fmtGB(mem.short_GB)} per GPU` : '';
  const verdict = showVerdict(
    'unfit-verdict',
    `Does not fit in the ${fmtGB(mem.budget_GB)} memory budget${short}, so no latency is shown. ` + mem.to_fit,
    'headline',
  );
  const ways = Array.isArray(mem.ways_to_fit) ? mem.ways_to_fit : [];
  if (ways.length) {
    verdict.append(
      el(
        'div',
        { class: 'ways-to-fit' },
        ...ways.map((way) => {
          const button = el('button', { type: 'button', class: 'way-to-fit', text: wayLabel(way) });
          button.addEventListener('click', () => applyWay(way));
          return button;
        }),
      ),
    );
  }
}

// The inputs a way out (memory.ways_to_fit) may change, in the order they are set: the GPU
// count after tp, which would otherwise keep the replicas (Form.keepCount).
const WAY_FIELDS = [
  ['parallelism.tp', 'tp'],
  ['num_gpus', 'num_gpus'],
  ['precision.weights', 'weights'],
  ['precision.kv_cache', 'kv_cache'],
  ['workload.batch_size', 'batch_size'],
];

function wayLabel(way) {
  const parts = [];
  const tp = getPath(way, 'parallelism.tp');
  if (tp !== undefined) parts.push(`TP ${tp} on ${way.num_gpus} GPUs`);
  const weights = getPath(way, 'precision.weights');
  const kv = getPath(way, 'precision.kv_cache');
  if (weights !== undefined) parts.push(`${weights} weights`);
  if (kv !== undefined) parts.push(`${kv} KV cache`);
  const batch = getPath(way, 'workload.batch_size');
  if (batch !== undefined) return `Use batch ${batch}`;
  return `Use ${parts.join(', ')} (batch up to ${way.max_batch_size})`;
}

// Sets the way's inputs, then one input event recomputes with all of them.
function applyWay(way) {
  let last = null;
  for (const [path, id] of WAY_FIELDS) {
    const v = getPath(way, path);
    if (v === undefined) continue;
    $(id).value = String(v);
    last = id;
  }
  if (last) $(last).dispatchEvent(new Event('input', { bubbles: true }));
}

const MEMORY_PARTS = [
  { key: 'weights_GB', label: 'Weights', cls: 'mem-weights' },
  { key: 'kv_cache_GB', label: 'KV cache', cls: 'mem-kv' },
  { key: 'state_GB', label: 'Recurrent state', cls: 'mem-state' }, // hybrid models: flat in context
  { key: 'activations_GB', label: 'Activations', cls: 'mem-act' },
  { key: 'reserve_GB', label: 'Reserved', cls: 'mem-reserve' },
  { key: 'free_GB', label: 'Free', cls: 'mem-free' },
  { key: 'headroom_GB', label: 'Outside budget', cls: 'mem-headroom' }, // capacity - budget
];

const state = {
  M: null,
  presets: { models: [], hardware: [], scenarios: [], setups: [] },
  form: null, // the setup's inputs (form.js), set up by wire()
  request: null, // the request object built from the form (always current)
  lastResult: null, // the result whose numbers are on screen
  pin: null, // Pin (ui.js) of the headlines, set up by wire()
  wasmModule: null, // the compiled module, shared with the simulator's worker
  sweepGeneration: 0, // the batch sweep in flight; an edit abandons older ones
  batchSweep: [], // [{ batch, res }] of the last finished batch sweep
  contextSweep: [], // [{ context, res }] of the last finished context sweep
  stale: true,
  inputErrors: new Map(), // target -> message (local parsing problems)
  linkErrors: new Map(), // target -> message (from decode_link / scenario application)
  // Targets whose invalid link value was put back into its input: the estimator
  // judges those again on the next edit, so their link error need not stay.
  restoredLinkTargets: new Set(),
  estimateError: null, // { target, message, path }
  generalMessages: [],
  renders: 0,
};

// ---------------------------------------------------------------- utilities

function getPath(obj, path) {
  let cur = obj;
  for (const k of path.split('.')) {
    if (!isPlainObject(cur) || !(k in cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

// Returns [text, unit] for a duration in milliseconds.
function fmtDuration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return ['—', 'ms'];
  if (Math.abs(ms) >= 10000) return [fmtNum(ms / 1000), 's'];
  return [fmtNum(ms), 'ms'];
}

function opLabel(op) {
  return OP_LABELS[op] || String(op).replace(/_/g, ' ');
}

// ------------------------------------------------------------ form <-> request

// Shows each problem beside its input (the first one found for it), the rest in the banner:
// the form's own parsing problems, then the link's, then the estimator's.
function renderErrors() {
  const byTarget = new Map();
  const general = [...state.generalMessages];
  const add = (target, msg) => {
    if (target === 'general') general.push(msg);
    else if (!byTarget.has(target)) byTarget.set(target, msg);
  };
  for (const [t, m] of state.inputErrors) add(t, m);
  for (const [t, m] of state.linkErrors) add(t, m);
  if (state.estimateError) add(state.estimateError.target, state.estimateError.message);
  state.form.showErrors(byTarget, general);
}

function presetById(list, id) {
  return list.find((p) => p.id === id);
}

// Builds the request from the form. Local problems go to state.inputErrors.
function buildRequest() {
  const { request, inputErrors } = state.form.build({ task: 'inference' });
  state.inputErrors = inputErrors;
  if (request.model !== undefined) labelPublished(request.model);
  return request;
}

// Applies a (possibly partial) request to the form. Returns problems found
// as [{path, message}] (e.g. an unknown preset id).
function applyRequest(req) {
  const problems = state.form.apply(req);
  if (req.task !== undefined && req.task !== 'inference')
    problems.unshift({ path: 'task', message: `task: this page computes inference only (got "${req.task}")` });
  return problems;
}

// ------------------------------------------------ which GPU, how many (search target "hardware")

const GPU = 'gpu'; // the panel's id prefix

/** The GPU comparison of the form's request: every GPU type at the smallest TP that fits it (the
 * search picks hardware, GPU count and layout, and prices each at its list price); null while a
 * field is invalid. */
function gpuSearchRequest() {
  const { request, inputErrors } = state.form.build({ task: 'inference' });
  if (inputErrors.size > 0) return null;
  const q = clone(request);
  for (const key of ['hardware', 'num_gpus', 'parallelism', 'cost_per_gpu_hour_usd']) delete q[key];
  return { ...q, task: 'search', search: { target: 'hardware' } };
}

function gpuSearch() {
  const q = gpuSearchRequest();
  runSearch(GPU, q, (res, seconds) => showGpuSearch(q, res, seconds));
}

function showGpuSearch(q, res, seconds) {
  const money = (x) => (typeof x === 'number' ? `$${fmtNum(x)}` : '–');
  // The GPU types ruled out, those with the same reason together.
  const why = new Map();
  for (const x of res.rejected) why.set(x.reason, [...(why.get(x.reason) || []), x.hardware]);
  const not = [...why].map(([reason, ids]) => `${ids.join(', ')} (${reason})`).join('; ');
  state.gpuSearchKey = JSON.stringify(q);
  state.gpuSearchNote =
    `${res.fitting} of ${res.considered} GPU types fit this model and workload within one node, each at ` +
    'the smallest tensor parallelism that fits; cheapest per output token at the low edge of the ' +
    "throughput's 80 % band first, GPU types without a list price after." +
    (not ? ` Not: ${not}.` : '') +
    ` Compared in ${seconds.toFixed(1)} s.`;
  $(`${GPU}-search-note`).textContent = state.gpuSearchNote;
  const head = [
    '#',
    'GPU',
    'GPUs',
    'TTFT',
    'TPOT',
    'Tok/s',
    'at 80 % low',
    '$/Mtok',
    'at 80 % low',
    'J/token',
    'Kernel fits',
    '',
  ];
  fillCandidates(
    $(`${GPU}-search-table`),
    head,
    2,
    res.candidates,
    (c) => [
      el('td', { text: c.name, title: c.hardware, 'data-hardware': c.hardware }),
      el('td', { class: 'num', text: String(c.num_gpus) }),
      el('td', { class: 'num', text: fmtMs(c.ttft_ms).join(' ') }),
      el('td', { class: 'num', text: fmtMs(c.tpot_ms).join(' ') }),
      el('td', { class: 'num', text: fmtNum(c.output_tokens_per_s) }),
      el('td', {
        class: 'num',
        text: typeof c.output_tokens_per_s_low === 'number' ? fmtNum(c.output_tokens_per_s_low) : '–',
      }),
      el('td', { class: 'num', text: money(c.usd_per_million_output_tokens) }),
      el('td', {
        class: 'num',
        'data-value': String(c.usd_per_million_output_tokens_high),
        text: money(c.usd_per_million_output_tokens_high),
      }),
      el('td', {
        class: 'num',
        text: typeof c.joules_per_output_token === 'number' ? fmtNum(c.joules_per_output_token) : '–',
      }),
      el('td', { class: 'num', text: fmtPct(c.tier2_time_share) }),
    ],
    (r) => useGpuCandidate(r),
    state.M,
  );
}

// Use: the candidate's request (its GPU, count and layout) becomes the form.
function useGpuCandidate(request) {
  resetForm();
  $('scenario').value = '';
  applyRequest(request);
  updateNotes();
  recompute();
}

function resetForm() {
  state.linkErrors = new Map();
  state.restoredLinkTargets = new Set();
  state.generalMessages = [];
  $('model-custom').value = '';
  $('hardware-custom').value = '';
  state.form.reset(DEFAULT_REQUEST);
}

// --------------------------------------------------------------- recompute

// The MoE-only inputs (expert groups, dispatch, redundant experts) leave a dense model's form;
// one holding other than its default (empty, ep 1) stays, so that its value and any error on it
// are seen.
const MOE_ONLY = { ep: '1', moe_dispatch: '', redundant_experts: '' };

function showMoeFields(model) {
  const m = typeof model === 'string' ? presetById(state.presets.models, model)?.model : model;
  const dense = isPlainObject(m) && !(Number(m.num_experts) > 0);
  for (const [id, idle] of Object.entries(MOE_ONLY)) {
    const v = $(id).value;
    $(id).closest('.field').hidden = dense && (v === '' || v === idle);
  }
}

function recompute() {
  const req = buildRequest();
  state.request = req;
  state.estimateError = null;
  showMoeFields(req.model);

  let result = null;
  if (state.inputErrors.size === 0) {
    const r = call(state.M, 'estimate', JSON.stringify(req));
    if (r.ok) {
      result = r.result;
    } else {
      const err = r.error || {};
      state.estimateError = {
        path: err.path || '',
        target: state.form.target(err.path),
        message: err.message || 'The estimate failed.',
      };
    }
  }
  const blocked = state.inputErrors.size > 0 || state.linkErrors.size > 0 || !result;
  if (!blocked) {
    state.lastResult = result;
    renderResult(result);
    scheduleBatchSweep(req, result);
    if (!$('view-inference').hidden) followLink(state.M, req);
  }
  setStale(blocked);
  if (!blocked) announceHeadline($('results'), $('announce'));
  if (state.gpuSearchKey) showSearchStaleness(GPU, state.gpuSearchKey, gpuSearchRequest(), state.gpuSearchNote);
  renderErrors();
  $('share-button').disabled = state.inputErrors.size > 0;
}

function setStale(stale) {
  state.stale = stale;
  $('results').classList.toggle('stale', stale);
  $('results').setAttribute('aria-busy', stale ? 'true' : 'false');
  $('stale-banner').hidden = !stale;
  $('stale-banner').textContent = state.lastResult
    ? 'Results are out of date — fix the highlighted fields to recompute.'
    : 'No results yet — fix the highlighted fields to compute.';
  document.documentElement.dataset.status = stale ? 'stale' : 'ready';
}

// ------------------------------------------------------------------ render

function setMetric(id, value, kind) {
  const node = $(id);
  if (kind === 'duration') {
    const [text, unit] = fmtDuration(value);
    node.textContent = text;
    $(`${id}-unit`).textContent = unit;
  } else {
    node.textContent = fmtNum(value);
  }
  node.dataset.value = String(value);
}

/** "80% band 9.04–16.5 ms": the interval the leave-one-source-out errors give the estimate. */
function setBand(id, band, kind) {
  const node = $(`${id}-band`);
  if (!band || !Number.isFinite(band.low) || !Number.isFinite(band.high)) {
    node.textContent = '';
    return;
  }
  const fmt = (v) => (kind === 'duration' ? fmtDuration(v).join(' ') : fmtNum(v));
  node.textContent = `80% band ${fmt(band.low)} – ${fmt(band.high)}`;
  node.dataset.low = String(band.low);
  node.dataset.high = String(band.high);
}

// Where the numbers come from, in words (docs/model.md: Tier 0 public efficiencies, Tier 1 a fitted
// engine profile, Tier 2 fits to this GPU's measured kernels); the tier number is in the title.
function pricedBy(res) {
  const share = Math.round(100 * (res.tier2_time_share ?? 0));
  const what =
    share >= 100
      ? "priced from this GPU's measured kernels"
      : share > 0
        ? `${share}% of the time priced from this GPU's measured kernels, the rest from public efficiencies`
        : 'priced from public efficiencies (no measured kernels of this GPU)';
  return res.tier === 1 ? `${what}; fitted engine overheads` : what;
}

function renderResult(res) {
  state.renders += 1;
  document.documentElement.dataset.renders = String(state.renders);
  const mdl = res.model || {};
  const hw = res.hardware || {};
  const gpus = res.num_gpus ?? state.request.num_gpus;
  const tp = getPath(state.request, 'parallelism.tp') ?? 1;
  const pp = getPath(state.request, 'parallelism.pp') ?? 1;
  const replicas = res.replicas ?? 1;
  $('results-subtitle').textContent =
    `${mdl.name || mdl.id || 'model'} on ${gpus} × ${hw.name || hw.id || 'GPU'}` +
    ` · TP ${tp}${getPath(state.request, 'parallelism.dp_attention') ? ' (DP attention)' : ''}` +
    `${(getPath(state.request, 'parallelism.ep') ?? 1) > 1 ? ` · EP ${getPath(state.request, 'parallelism.ep')}` : ''}` +
    `${pp > 1 ? ` · PP ${pp}` : ''} · ${replicas} ${replicas === 1 ? 'replica' : 'replicas'}` +
    ` · ${pricedBy(res)}`;
  $('results-subtitle').title = res.tier === undefined ? '' : `accuracy tier ${res.tier} (docs/model.md)`;

  setMetric('ttft', res.ttft_ms, 'duration');
  setMetric('tpot', res.tpot_ms, 'duration');
  setMetric('e2e', res.e2e_ms, 'duration');
  setMetric('tps', res.output_tokens_per_s);
  const band = res.interval || {};
  setBand('ttft', band.ttft_ms, 'duration');
  setBand('tpot', band.tpot_ms, 'duration');
  setBand('e2e', band.e2e_ms, 'duration');
  setBand('tps', band.output_tokens_per_s);
  $('tps-sub').textContent =
    (replicas > 1 ? `across ${replicas} replicas` : 'one replica') + costText(res) + energyText(res.energy);

  renderMemory(res.memory || {}, res);
  renderVerdict(res.memory || {});
  const bd = Array.isArray(res.breakdown) ? res.breakdown : [];
  renderPhase(
    'prefill',
    bd.filter((r) => r.phase === 'prefill'),
    res.ttft_ms,
  );
  renderPhase(
    'decode',
    bd.filter((r) => r.phase === 'decode'),
    res.tpot_ms,
  );
  renderWarnings(res.warnings || []);
  renderAssumptions(res.assumptions || []);
  if (state.pin) state.pin.render(res);
  renderRoofline(bd);
}

// ------------------------------------------------------------------ roofline

/** The hardware object of the request: the preset's, or the custom one. */
function requestHardware() {
  const h = state.request.hardware;
  if (WhatIf.is(h)) {
    const r = call(state.M, 'hardware_object', JSON.stringify(h)); // the scaled figures, as the core has them
    return r.ok ? r.result : null;
  }
  if (isPlainObject(h)) return h;
  return state.presets.hardware.find((p) => p.id === h)?.hardware ?? null;
}

/**
 * Each op with FLOPs and bytes as a point (arithmetic intensity = FLOPs / bytes, attained =
 * FLOPs / time) on log-log axes under the roofline min(peak, bandwidth × intensity): the 16-bit
 * dense peak, and the fp8 one dashed when the weights are fp8.
 */
function renderRoofline(rows) {
  const box = $('roofline');
  const hw = requestHardware();
  const peaks = hw?.dense_peak_TFLOPS || {};
  const peak16 = peaks.bf16 ?? peaks.fp16;
  const bw = hw?.hbm_bandwidth_GBps;
  const pts = rows
    .filter((r) => r.flops > 0 && r.bytes > 0 && r.time_ms > 0)
    .map((r) => ({ ...r, ai: r.flops / r.bytes, tflops: r.flops / (r.time_ms * 1e-3) / 1e12 }));
  if (!peak16 || !bw || !pts.length) {
    box.replaceChildren(
      el('p', {
        class: 'hint',
        text: 'No roofline: the hardware gives no 16-bit peak or bandwidth, or no op moves bytes.',
      }),
    );
    return;
  }
  const roofs = [{ peak: peak16, cls: 'roof', label: `${fmtNum(peak16)} TFLOP/s (16-bit)` }];
  if (getPath(state.request, 'precision.weights') === 'fp8' && peaks.fp8)
    roofs.push({ peak: peaks.fp8, cls: 'roof dashed', label: `${fmtNum(peaks.fp8)} (fp8)` });
  const top = Math.max(...roofs.map((r) => r.peak));
  const lx = (v) => Math.log10(v);
  const xMin = Math.floor(lx(Math.min(...pts.map((p) => p.ai), 0.5)));
  const xMax = Math.ceil(lx(Math.max(...pts.map((p) => p.ai), ((top * 1e12) / (bw * 1e9)) * 4)));
  const yMax = Math.ceil(lx(top * 1.5));
  const yMin = Math.min(Math.floor(lx(Math.min(...pts.map((p) => p.tflops)))), yMax - 2);
  const W = 560,
    H = 300,
    m = { l: 56, r: 26, t: 16, b: 40 };
  const p10 = (e) => (e >= 0 ? fmtInt(10 ** e) : String(Number((10 ** e).toPrecision(1))));
  const X = (v) => m.l + ((lx(v) - xMin) / (xMax - xMin)) * (W - m.l - m.r);
  const Y = (v) => H - m.b - ((lx(v) - yMin) / (yMax - yMin)) * (H - m.t - m.b);
  const root = svg('svg', {
    viewBox: `0 0 ${W} ${H}`,
    width: '100%',
    role: 'img',
    class: 'line-chart',
    'aria-label': 'Roofline of the ops',
  });
  for (let e = xMin; e <= xMax; e++) {
    root.append(svg('line', { x1: X(10 ** e), x2: X(10 ** e), y1: m.t, y2: H - m.b, class: 'grid' }));
    root.append(svg('text', { x: X(10 ** e), y: H - m.b + 13, class: 'tick', 'text-anchor': 'middle' }, p10(e)));
  }
  for (let e = yMin; e <= yMax; e++) {
    root.append(svg('line', { x1: m.l, x2: W - m.r, y1: Y(10 ** e), y2: Y(10 ** e), class: 'grid' }));
    root.append(
      svg(
        'text',
        { x: m.l - 5, y: Y(10 ** e), class: 'tick', 'text-anchor': 'end', 'dominant-baseline': 'central' },
        p10(e),
      ),
    );
  }
  root.append(
    svg(
      'text',
      { x: (m.l + W - m.r) / 2, y: H - 6, class: 'axis-label', 'text-anchor': 'middle' },
      'arithmetic intensity (FLOP/byte, log)',
    ),
  );
  root.append(yAxisLabel(m, H, 'TFLOP/s (log)'));
  for (const r of roofs) {
    const knee = (r.peak * 1e12) / (bw * 1e9);
    const x0 = 10 ** xMin;
    const y0 = Math.max((bw * 1e9 * x0) / 1e12, 10 ** yMin);
    const xs = (y0 * 1e12) / (bw * 1e9);
    root.append(
      svg('polyline', {
        class: r.cls,
        points: `${X(xs)},${Y(y0)} ${X(knee)},${Y(r.peak)} ${X(10 ** xMax)},${Y(r.peak)}`,
      }),
    );
    root.append(svg('text', { x: W - m.r - 2, y: Y(r.peak) - 4, class: 'tick', 'text-anchor': 'end' }, r.label));
  }
  for (const p of pts) {
    const c = svg('circle', {
      cx: X(p.ai),
      cy: Y(p.tflops),
      r: 4,
      class: `point ${p.phase}`,
      'data-op': p.op,
      'data-phase': p.phase,
      'data-ai': p.ai,
      'data-tflops': p.tflops,
    });
    c.append(
      svg(
        'title',
        {},
        `${p.phase} · ${opLabel(p.op)}: ${fmtNum(p.ai)} FLOP/B, ${fmtNum(p.tflops)} TFLOP/s, ${p.bound}-bound`,
      ),
    );
    root.append(c);
  }
  box.replaceChildren(
    root,
    el('p', {
      class: 'hint',
      text: `${fmtNum(bw / 1000)} TB/s memory slope. Prefill ops blue, decode ops green; hover a point for its op.`,
    }),
  );
}

// ------------------------------------------------------------ batch sweep

/** Batch sizes of the sweep: 1, 2, 4, … up to the largest that fits (at most 1,024), and the
 * setup's own. */
function sweepBatches(current, largest) {
  const top = Math.min(Math.max(largest, current), 1024);
  const out = new Set([current]);
  for (let b = 1; b <= top; b *= 2) out.add(b);
  if (largest > 0 && largest <= 1024) out.add(largest);
  return [...out].sort((a, b) => a - b);
}

/**
 * The setup re-estimated at each of `values` (`set` writes one into a copy of the request; the
 * setup's own value reuses its result), keeping the answers `keep` accepts: [{ value, res }].
 */
function sweepPoints(request, res, values, current, set, keep) {
  const points = [];
  for (const v of values) {
    const q = clone(request);
    set(q, v);
    const r = v === current ? { ok: true, result: res } : call(state.M, 'estimate', JSON.stringify(q));
    if (r.ok && keep(r.result)) points.push({ value: v, res: r.result });
  }
  return points;
}

/**
 * A log-2 axis from 2^xMin to 2^xTop: the setup's value and the largest that fits marked, ticks
 * at whole powers of two every one or more doublings (at most 6 labels).
 */
function log2Axis(xMin, xTop, current, largest) {
  const markers = [{ x: Math.log2(current), label: 'you', cls: 'current' }];
  if (largest >= 1) markers.push({ x: Math.log2(largest), label: `fits up to ${fmtInt(largest)}`, cls: 'saturation' });
  const step = Math.max(1, Math.ceil(Math.floor(xTop - xMin) / 5));
  const xTicks = [];
  for (let e = Math.ceil(xMin); e <= xTop; e += step) xTicks.push(e);
  return { markers, xTicks, xFmt: (v) => fmtInt(2 ** v) };
}

/**
 * The setup at each batch of the sweep (a dozen estimates), run after the headline, off the
 * input event; an edit made meanwhile abandons it. Charts TTFT, TPOT and output throughput
 * against the batch on a log-2 axis, with the setup's batch and the largest that fits marked.
 */
function scheduleBatchSweep(request, res) {
  const gen = ++state.sweepGeneration;
  const box = $('batch-charts');
  box.dataset.sweep = 'pending';
  setTimeout(() => {
    if (gen !== state.sweepGeneration) return;
    const current = request.workload.batch_size ?? 1;
    const largest = res.memory?.max_batch_size ?? 0;
    const points = sweepPoints(
      request,
      res,
      sweepBatches(current, largest),
      current,
      (q, b) => {
        q.workload.batch_size = b;
      },
      (r) => r.memory?.fits !== false,
    ).map(({ value, res: r }) => ({ batch: value, res: r }));
    state.batchSweep = points;
    const x = (b) => Math.log2(b);
    const xTop = Math.max(x(points.at(-1)?.batch ?? 1), 1);
    const { markers, xTicks, xFmt } = log2Axis(0, xTop, current, largest);
    const chart = (title, yLabel, series) =>
      lineChart({ title, xLabel: 'batch size (log scale)', yLabel, markers, xTop, xTicks, xFmt, series });
    // Each metric with its 80 % band (interval) shaded.
    const line = (label, cls, key) => ({
      label,
      cls,
      points: points.map((p) => [x(p.batch), p.res[key]]),
      band: points.map((p) => [x(p.batch), p.res.interval?.[key]?.low, p.res.interval?.[key]?.high]),
    });
    const charts = [
      chart('TTFT (ms)', 'ms', [line('TTFT', 's1', 'ttft_ms')]),
      chart('TPOT (ms)', 'ms', [line('TPOT', 's1', 'tpot_ms')]),
      chart('Output throughput (tokens/s)', 'tok/s', [line('output tokens/s', 's2', 'output_tokens_per_s')]),
    ];
    charts.forEach((c, i) => {
      c.dataset.chart = ['ttft', 'tpot', 'throughput'][i];
    });
    box.replaceChildren(...charts);
    renderContextSweep(request, res);
    box.dataset.sweep = 'done';
  }, 0);
}

/**
 * Memory per GPU against context length (prompt + output tokens per sequence) at the setup's
 * batch and output length: 512, 1K, 2K, … up to the model's context, and the setup's own.
 * Weights stay flat, the KV cache grows with the context; the budget line shows where it stops
 * fitting (the longest context that fits is marked).
 */
function renderContextSweep(request, res) {
  const out = request.workload.output_tokens;
  const current = request.workload.prompt_tokens + out;
  const contexts = new Set([current]);
  for (let c = 512; c <= 1 << 21; c *= 2) if (c > out) contexts.add(c);
  // Past the model's context an estimate is an error: left out.
  const points = sweepPoints(
    request,
    res,
    [...contexts].sort((a, b) => a - b),
    current,
    (q, c) => {
      q.workload.prompt_tokens = c - out;
    },
    (r) => Boolean(r.memory),
  ).map(({ value, res: r }) => ({ context: value, res: r }));
  state.contextSweep = points;
  const x = (c) => Math.log2(c);
  const mem = (p) => p.res.memory;
  const used = (p) =>
    mem(p).weights_GB + mem(p).kv_cache_GB + (mem(p).state_GB || 0) + mem(p).activations_GB + mem(p).reserve_GB;
  const xMin = x(points[0]?.context ?? 512);
  const xTop = Math.max(x(points.at(-1)?.context ?? 1024), xMin + 1);
  const { markers, xTicks, xFmt } = log2Axis(xMin, xTop, current, res.memory?.max_context_tokens ?? 0);
  const chart = lineChart({
    title: 'Memory per GPU (GB)',
    xLabel: 'context per sequence, tokens (log scale)',
    yLabel: 'GB',
    markers,
    xMin,
    xTop,
    xTicks,
    xFmt,
    series: [
      { label: 'in use', cls: 's1', points: points.map((p) => [x(p.context), used(p)]) },
      { label: 'KV cache', cls: 's2', points: points.map((p) => [x(p.context), mem(p).kv_cache_GB]) },
      { label: 'budget', cls: 's3', points: points.map((p) => [x(p.context), mem(p).budget_GB]) },
    ],
  });
  chart.dataset.chart = 'memory';
  $('context-charts').replaceChildren(chart);
}

function renderMemory(mem, res) {
  const capacity0 = Number(mem.capacity_GB) || 0;
  const budget = Number(mem.budget_GB);
  const headroom = Number.isFinite(budget) && capacity0 > budget ? capacity0 - budget : 0;
  // The recurrent (Mamba-2 / gated DeltaNet) state shows only for a hybrid model (it is 0 for a transformer).
  const parts = MEMORY_PARTS.filter((p) => p.key !== 'state_GB' || Number(mem.state_GB) > 0).map((p) => ({
    ...p,
    value: p.key === 'headroom_GB' ? headroom : Number(mem[p.key]) || 0,
  }));
  const used = parts.filter((p) => p.key !== 'free_GB').reduce((a, p) => a + Math.max(0, p.value), 0);
  const free = Math.max(0, Number(mem.free_GB) || 0);
  const capacity = capacity0 || used + free;
  const total = Math.max(capacity, used + free, 1e-9);
  const fits = mem.fits !== false;

  const bar = $('memory-bar');
  const segs = [];
  for (const p of parts) {
    const v = p.key === 'free_GB' ? free : Math.max(0, p.value);
    if (v <= 0) continue;
    const seg = el('div', { class: `mem-seg ${p.cls}`, title: `${p.label}: ${fmtGB(v)}` });
    seg.style.width = `${(v / total) * 100}%`;
    segs.push(seg);
  }
  const limit = Number.isFinite(budget) && budget > 0 ? budget : capacity;
  if (!fits && limit > 0 && limit < total) {
    const marker = el('div', { class: 'mem-capacity', title: `Budget: ${fmtGB(limit)}` });
    marker.style.left = `${(limit / total) * 100}%`;
    segs.push(marker);
  }
  bar.replaceChildren(...segs);
  bar.classList.toggle('overflow', !fits);
  bar.setAttribute(
    'aria-label',
    `GPU memory: ${parts.map((p) => `${p.label} ${fmtGB(p.key === 'free_GB' ? free : p.value)}`).join(', ')} of ${fmtGB(capacity)}`,
  );

  const legend = $('memory-legend');
  const items = parts
    .filter((p) => p.key !== 'headroom_GB' || p.value > 0)
    .map((p) =>
      el(
        'li',
        {
          'data-part': p.key,
          title: p.key === 'headroom_GB' ? 'Left unused by the GPU memory utilization setting' : null,
        },
        el('span', { class: `swatch ${p.cls}` }),
        el('span', { class: 'legend-label', text: p.label }),
        el('span', { class: 'legend-value', text: fmtGB(p.key === 'free_GB' ? Number(mem.free_GB) : p.value) }),
      ),
    );
  items.push(
    el(
      'li',
      { class: 'legend-total' },
      el('span', { class: 'legend-label', text: 'Capacity' }),
      el('span', {
        class: 'legend-value',
        text: `${fmtGB(capacity)}${mem.budget_GB !== undefined ? ` (budget ${fmtGB(mem.budget_GB)})` : ''}`,
      }),
    ),
  );
  legend.replaceChildren(...items);

  const badge = $('fits-badge');
  badge.className = `badge ${fits ? 'ok' : 'bad'}`;
  badge.textContent = fits ? 'Fits' : `Does not fit${mem.free_GB < 0 ? ` — short by ${fmtGB(-mem.free_GB)}` : ''}`;
  badge.dataset.fits = String(fits);

  const wl = state.request.workload || {};
  const seqLen = (wl.prompt_tokens || 0) + (wl.output_tokens || 0);
  const mb = $('max-batch');
  mb.dataset.value = String(mem.max_batch_size);
  mb.textContent =
    typeof mem.max_batch_size === 'number'
      ? mem.max_batch_size > 0
        ? `${fmtInt(mem.max_batch_size)} ${mem.max_batch_size === 1 ? 'sequence' : 'sequences'}${seqLen ? ` of ${fmtInt(seqLen)} tokens` : ''}`
        : 'none — the weights do not fit'
      : '—';
  const mc = $('max-context');
  mc.dataset.value = String(mem.max_context_tokens);
  mc.textContent =
    typeof mem.max_context_tokens === 'number'
      ? mem.max_context_tokens > 0
        ? `${fmtInt(mem.max_context_tokens)} tokens${wl.batch_size ? ` at batch ${fmtInt(wl.batch_size)}` : ''}`
        : `none at batch ${fmtInt(wl.batch_size)}`
      : '—';
  $('kv-per-token').textContent =
    typeof mem.kv_cache_bytes_per_token === 'number' ? fmtSI(mem.kv_cache_bytes_per_token, 'B') : '—';
  const mdl = res.model || {};
  $('params').textContent =
    typeof mdl.params_B === 'number'
      ? `${mdl.params_B.toFixed(2)} B parameters${typeof mdl.active_params_B === 'number' && Math.abs(mdl.active_params_B - mdl.params_B) > 1e-9 ? ` (${mdl.active_params_B.toFixed(2)} B active)` : ''}`
      : '—';
}

function renderPhase(phase, rows, phaseTotal) {
  const sorted = [...rows].sort((a, b) => (b.time_ms || 0) - (a.time_ms || 0));
  const sum = rows.reduce((a, r) => a + (Number(r.time_ms) || 0), 0);
  const [tText, tUnit] = fmtDuration(sum);
  $(`${phase}-total`).textContent = rows.length ? `— ${tText} ${tUnit}` : '';

  // Chart.
  const chart = $(`${phase}-chart`);
  if (!sorted.length) {
    chart.replaceChildren(el('p', { class: 'muted', text: 'No operations reported.' }));
  } else {
    const W = 450;
    const rowH = 24;
    const labelW = 148;
    const valueW = 78;
    const barW = W - labelW - valueW;
    const H = sorted.length * rowH + 4;
    const max = Math.max(...sorted.map((r) => Number(r.time_ms) || 0), 1e-12);
    const root = svg('svg', {
      viewBox: `0 0 ${W} ${H}`,
      width: '100%',
      role: 'img',
      class: 'bar-chart',
      'aria-label': `${phase} time by operation`,
      preserveAspectRatio: 'xMinYMin meet',
    });
    sorted.forEach((r, i) => {
      const y = i * rowH + 2;
      const t = Number(r.time_ms) || 0;
      const w = Math.max(t > 0 ? 1.5 : 0, (t / max) * barW);
      const g = svg('g', { class: 'bar-row' });
      g.append(
        svg(
          'title',
          {},
          `${opLabel(r.op)}: ${fmtDuration(t).join(' ')}, ${fmtPct(r.share)} of ${phase}, ${r.bound}-bound`,
        ),
      );
      g.append(
        svg(
          'text',
          { x: labelW - 8, y: y + rowH / 2, class: 'bar-label', 'text-anchor': 'end', 'dominant-baseline': 'central' },
          opLabel(r.op),
        ),
      );
      g.append(svg('rect', { x: labelW, y: y + 4, width: barW, height: rowH - 8, rx: 3, class: 'bar-track' }));
      g.append(
        svg('rect', {
          x: labelW,
          y: y + 4,
          width: w.toFixed(2),
          height: rowH - 8,
          rx: 3,
          class: `bar bound-${r.bound}`,
        }),
      );
      g.append(
        svg(
          'text',
          { x: labelW + barW + 8, y: y + rowH / 2, class: 'bar-value', 'dominant-baseline': 'central' },
          `${fmtDuration(t).join(' ')}`,
        ),
      );
      root.append(g);
    });
    chart.replaceChildren(root);
  }

  // Table.
  const table = $(`${phase}-table`);
  const head = el(
    'thead',
    null,
    el(
      'tr',
      null,
      el('th', { scope: 'col', text: 'Operation' }),
      el('th', { scope: 'col', class: 'num', text: 'Time' }),
      el('th', { scope: 'col', class: 'num', text: 'Share' }),
      el('th', { scope: 'col', text: 'Bound' }),
      el('th', { scope: 'col', class: 'num', text: 'FLOPs' }),
      el('th', { scope: 'col', class: 'num', text: 'Bytes moved' }),
    ),
  );
  const body = el(
    'tbody',
    null,
    ...sorted.map((r) =>
      el(
        'tr',
        { 'data-op': r.op },
        el('th', { scope: 'row', text: opLabel(r.op) }),
        el('td', { class: 'num', text: fmtDuration(r.time_ms).join(' ') }),
        el('td', { class: 'num', text: fmtPct(r.share) }),
        el(
          'td',
          null,
          el('span', {
            class: `bound-tag bound-${r.bound}`,
            title: `${r.bound}-bound`,
            text: BOUND_LABELS[r.bound] || String(r.bound),
          }),
        ),
        el('td', { class: 'num', text: fmtSI(r.flops, '') }),
        el('td', { class: 'num', text: fmtSI(r.bytes, 'B') }),
      ),
    ),
  );
  const totalRow = el(
    'tfoot',
    null,
    el(
      'tr',
      null,
      el('th', { scope: 'row', text: phase === 'prefill' ? 'Total (TTFT)' : 'Total (one step)' }),
      el('td', { class: 'num', text: `${tText} ${tUnit}` }),
      el('td', { class: 'num', text: rows.length ? '100%' : '' }),
      el('td'),
      el('td'),
      el('td'),
    ),
  );
  table.replaceChildren(
    el('caption', { class: 'visually-hidden', text: `${phase} time by operation` }),
    head,
    body,
    totalRow,
  );
  void phaseTotal;
}

function renderWarnings(warnings) {
  const list = $('warnings');
  list.replaceChildren(
    ...warnings.map((w) => el('li', { text: typeof w === 'string' ? w : w.message || JSON.stringify(w) })),
  );
  $('warnings-panel').hidden = warnings.length === 0;
}

function renderAssumptions(assumptions) {
  const table = $('assumptions');
  const head = el(
    'thead',
    null,
    el(
      'tr',
      null,
      el('th', { scope: 'col', text: 'Assumption' }),
      el('th', { scope: 'col', class: 'num', text: 'Value' }),
      el('th', { scope: 'col', text: 'Source' }),
    ),
  );
  const body = el(
    'tbody',
    null,
    ...assumptions.map((a) =>
      el(
        'tr',
        null,
        el('th', { scope: 'row', text: String(a.name || '').replace(/_/g, ' ') }),
        el('td', {
          class: 'num',
          text: `${typeof a.value === 'number' ? String(a.value) : JSON.stringify(a.value)}${a.unit ? ` ${a.unit}` : ''}`,
        }),
        el('td', { class: 'source', text: a.source || '' }),
      ),
    ),
  );
  table.replaceChildren(
    el('caption', { class: 'visually-hidden', text: 'Assumptions used by the estimate' }),
    head,
    body,
  );
}

// ---------------------------------------------------------------- links

function rawLinkValues(fragment) {
  // Best effort: if the fragment is query-string shaped, keep the raw value of
  // each key so an invalid number can be shown in its field beside its error.
  try {
    const p = new URLSearchParams(fragment);
    return p;
  } catch {
    return new URLSearchParams();
  }
}

function applyLink(fragment) {
  // Training, serving and collective links belong to their views; the inference form still gets
  // its defaults.
  const r = views.routeLink(fragment);
  if (!r) {
    if (!state.request) {
      resetForm();
      updateNotes();
      recompute();
    }
    return;
  }
  resetForm();
  if (!r.ok) {
    state.generalMessages = [`This link could not be read: ${(r.error && r.error.message) || 'unknown error'}`];
    $('scenario').value = '';
    recompute();
    return;
  }
  const { request = {}, errors = [] } = r.result || {};
  const problems = applyRequest(request);
  // The link's raw values, read only for an error an input can show its value for.
  let rawValues = null;
  const raw = () => (rawValues ??= rawLinkValues(fragment));
  const linkErrors = new Map();
  const restored = new Set();
  for (const e of [...errors, ...problems]) {
    const target = state.form.target(e.path);
    const message = e.message || `${e.path}: invalid value`;
    if (target === 'general') {
      state.generalMessages.push(`From the link: ${message}`);
      continue;
    }
    const f = state.form.fieldAt(e.path);
    if ((f?.kind === 'int' || f?.kind === 'num') && raw().has(e.path)) {
      const v = raw().get(e.path);
      if (v.trim() !== '' && Number.isFinite(Number(v))) {
        $(f.key).value = v;
        restored.add(target);
      }
    } else if (f?.kind === 'bool' && raw().get(e.path) === 'true') {
      $(f.key).value = 'true'; // a valid choice the estimator rejects in this setup
      restored.add(target);
    }
    if (!linkErrors.has(target)) linkErrors.set(target, message);
  }
  state.linkErrors = linkErrors;
  state.restoredLinkTargets = restored;
  $('scenario').value = '';
  updateNotes();
  recompute();
}

function share() {
  if (!views.share()) views.shareRequest(state.request);
}

// -------------------------------------------------------------- presets UI

function fillSelect(select, items, withCustom) {
  const opts =
    select.id === 'hardware'
      ? hardwareOptions(items)
      : items.map((p) => el('option', { value: p.id, text: p.name || p.id }));
  if (withCustom) opts.push(el('option', { value: CUSTOM, text: 'Custom…' }));
  select.replaceChildren(...opts);
}

function sourceHosts(source) {
  const urls = String(source || '').match(/https?:\/\/[^\s;,]+/g);
  if (!urls) return String(source || '');
  const hosts = [];
  for (const u of urls) {
    try {
      const h = new URL(u).hostname.replace(/^www\./, '');
      if (!hosts.includes(h)) hosts.push(h);
    } catch {
      /* not a URL */
    }
  }
  return hosts.join(', ');
}

function updateNotes() {
  for (const kind of ['model', 'hardware']) {
    const list = kind === 'model' ? state.presets.models : state.presets.hardware;
    const p = presetById(list, $(kind).value);
    const bits = [];
    if (p) {
      if (kind === 'model' && typeof p.published_params_B === 'number')
        bits.push(`${p.published_params_B} B parameters (published)`);
      if (p.source) bits.push(`Source: ${sourceHosts(p.source)}`);
    }
    const node = $(`${kind}-notes`);
    node.textContent = bits.join(' · ');
    node.title = p ? [p.notes, p.source].filter(Boolean).join('\n\n') : '';
  }
  const s = startingPoint($('scenario').value);
  $('scenario-notes').textContent = s ? s.notes || '' : '';
}

// --------------------------------------------------------------- wiring

// Called on a user edit of `target`: its own link error goes, and so do the
// errors of link values that were restored into their inputs (the estimator
// re-checks those with the edited setup).
function clearLinkError(target) {
  state.linkErrors.delete(target);
  for (const t of state.restoredLinkTargets) state.linkErrors.delete(t);
  state.restoredLinkTargets.clear();
}

function wire() {
  state.form = new Form({ prefix: '', M: state.M, presets: state.presets, fields: FIELDS });
  state.form.adopt('model');
  state.form.adopt('hardware');
  // Replicas of TP × PP GPUs: a larger replica raises the GPU count.
  state.form.keepCount('num_gpus', ['tp', 'pp']);
  state.form.whatIf.element.addEventListener('input', (e) => {
    clearLinkError(e.target.id);
    $('scenario').value = '';
    recompute();
  });
  // Pin to compare: each headline's ratio to the pinned result ("×0.62 vs 12.07 ms pinned").
  const ms = (v) => fmtDuration(v).join(' ');
  state.pin = new Pin(
    '',
    [
      ['ttft', (r) => r.ttft_ms, true, ms],
      ['tpot', (r) => r.tpot_ms, true, ms],
      ['e2e', (r) => r.e2e_ms, true, ms],
      ['tps', (r) => r.output_tokens_per_s, false, (v) => `${fmtNum(v)} tok/s`],
    ],
    { button: $('pin-button'), note: $('compare-note'), compareId: (id) => `${id}-compare` },
  );
  $('pin-button').addEventListener('click', () =>
    state.pin.toggle(state.stale ? null : state.lastResult, $('results-subtitle').textContent),
  );
  const form = $('setup');
  form.addEventListener('submit', (e) => e.preventDefault());

  // The form's own listeners (form.js: custom boxes, dropped files) run first.
  for (const kind of ['model', 'hardware']) {
    $(kind).addEventListener('input', () => {
      clearLinkError(kind);
      clearLinkError(`${kind}-custom`);
      $('scenario').value = '';
      updateNotes();
      recompute();
    });
    $(`${kind}-custom`).addEventListener('input', () => {
      clearLinkError(`${kind}-custom`);
      $('scenario').value = '';
      recompute();
    });
  }

  for (const f of FIELDS.filter((x) => x.kind !== 'spec')) {
    $(f.key).addEventListener('input', () => {
      clearLinkError(f.key);
      $('scenario').value = '';
      updateNotes();
      recompute();
    });
  }

  $('scenario').addEventListener('input', () => {
    const s = startingPoint($('scenario').value);
    if (!s) {
      updateNotes();
      return;
    }
    resetForm();
    const problems = applyRequest(s.request || {});
    for (const p of problems) {
      const t = state.form.target(p.path);
      if (t === 'general') state.generalMessages.push(`Scenario: ${p.message}`);
      else state.linkErrors.set(t, p.message);
    }
    $('scenario').value = s.id;
    updateNotes();
    recompute();
  });

  for (const kind of ['cli', 'request', 'result', 'csv']) {
    $(`export-${kind}`).addEventListener('click', () => {
      views.exportActive(kind, () => (state.stale ? null : state.lastResult));
      $('export').open = false;
    });
  }
  $('share-button').addEventListener('click', () => {
    share();
  });
  // Past the form to the tab's results (a button: a fragment link would be read as a setup).
  $('skip-link').addEventListener('click', () => {
    const results = $(`view-${document.body.dataset.task || 'inference'}`).querySelector('.results');
    results.tabIndex = -1;
    results.focus();
  });
  // Escape closes the Export menu and gives the focus back to it.
  $('export').addEventListener('keydown', (e) => {
    if (e.key !== 'Escape' || !$('export').open) return;
    $('export').open = false;
    $('export').querySelector('summary').focus();
  });

  window.addEventListener('hashchange', () => {
    const frag = location.hash.slice(1);
    if (frag) applyLink(frag);
  });
}

// ---------------------------------------------------------------- startup

/** The setup or benchmark scenario of an id of the "Start from" select, or undefined. */
function startingPoint(id) {
  return [...state.presets.setups, ...state.presets.scenarios].find((x) => x.id === id);
}

function scenarioIsInference(s) {
  const t = s && s.request && s.request.task;
  return t === undefined || t === 'inference';
}

// The precision and MoE-dispatch choices are the module's (schema()): the attention weights are
// every weight type but llama.cpp's GGUF files, which type their tensors themselves.
const TYPE_LABELS = { int4: 'int4 (weight-only)', fp4: 'fp4 (NVFP4)' };
function fillChoices() {
  const typeLabel = (t) => (GGUF_TYPES.has(t) ? `${t} (GGUF)` : TYPE_LABELS[t] || t);
  const add = (id, values, label) => $(id).append(...values.map((v) => new Option(label(v), v)));
  add('weights', WEIGHT_TYPES, typeLabel);
  add('attention_weights', schemaList('precision', 'attention_weights'), typeLabel);
  add('kv_cache', schemaList('precision', 'kv_cache'), typeLabel);
  add('moe_dispatch', schemaList('parallelism', 'moe_dispatch'), (d) => DISPATCH_LABELS[d] || d);
  add('engine', schemaList('engine', 'name'), (e) => (e === 'generic' ? 'generic (default)' : e));
}

// The "as published" choices name the checkpoint's types of the model the request holds (a
// preset id or an object): gpt-oss reads "as published (mxfp4)", its attention "(bf16)".
function labelPublished(model) {
  const m = typeof model === 'string' ? presetById(state.presets.models, model)?.model : model;
  const weights = (isPlainObject(m) && m.checkpoint_weights) || 'bf16';
  const block = isPlainObject(m) && m.checkpoint_weight_scaling === 'block' ? ', block-scaled' : '';
  $('weights').options[0].textContent = `as published (${weights}${block})`;
  const attention = isPlainObject(m) && m.checkpoint_attention_weights;
  $('attention_weights').options[0].textContent =
    $('weights').value === '' && attention ? `as published (${attention})` : 'same as weights';
}

async function main() {
  const status = $('load-status');
  $('headline').after(bandNote());
  let createFlopcast;
  try {
    ({ default: createFlopcast } = await import('./flopcast.mjs'));
    state.wasmModule = await compileModule();
    state.M = await createFlopcast(moduleOptions(state.wasmModule));
  } catch (e) {
    status.textContent = `The calculator module could not be loaded: ${(e && e.message) || e}`;
    status.classList.add('bad');
    document.documentElement.dataset.status = 'error';
    return;
  }

  const schema = loadSchema(state.M);
  const p = schema.ok ? call(state.M, 'presets') : schema;
  if (!p.ok) {
    status.textContent = `Presets could not be read: ${(p.error && p.error.message) || 'unknown error'}`;
    status.classList.add('bad');
    document.documentElement.dataset.status = 'error';
    return;
  }
  fillChoices();
  $('batch-sweep-panel').before(
    searchPanel(
      GPU,
      'Which GPU, how many',
      'Compare GPUs',
      'Prices this model and workload on every GPU type, each at the smallest tensor parallelism (within one node) whose memory holds it, at its list price; Use loads a row into the form.',
    ),
  );
  $(`${GPU}-search-run`).addEventListener('click', gpuSearch);
  state.presets = {
    models: Array.isArray(p.result.models) ? p.result.models : [],
    hardware: Array.isArray(p.result.hardware) ? p.result.hardware : [],
    scenarios: Array.isArray(p.result.scenarios) ? p.result.scenarios.filter(scenarioIsInference) : [],
    setups: Array.isArray(p.result.setups) ? p.result.setups.filter(scenarioIsInference) : [],
  };
  fillSelect($('model'), state.presets.models, true);
  fillSelect($('hardware'), state.presets.hardware, true);
  const sc = $('scenario');
  const options = (list) => list.map((s) => el('option', { value: s.id, text: s.name || s.id }));
  sc.replaceChildren(
    sc.options[0],
    el('optgroup', { label: 'Common setups' }, ...options(state.presets.setups)),
    el('optgroup', { label: 'Benchmark scenarios (llm-benchmark-suite)' }, ...options(state.presets.scenarios)),
  );

  let version = '';
  try {
    const v = state.M.version();
    version = typeof v === 'string' ? v : JSON.stringify(v);
  } catch (e) {
    version = `(version unavailable: ${e.message})`;
  }
  $('version').textContent = version;

  window.flopcast = Object.freeze({
    module: state.M,
    request: () => clone(state.request),
    lastResult: () => (state.lastResult ? clone(state.lastResult) : null),
    batchSweep: () => clone(state.batchSweep),
    contextSweep: () => clone(state.contextSweep),
    stale: () => state.stale,
    presets: () => clone(state.presets),
  });

  views.init({
    M: state.M,
    presets: state.presets,
    wasmModule: state.wasmModule,
    followInference: () => state.stale || followLink(state.M, state.request),
  });
  wire();
  status.hidden = true;
  $('share-button').disabled = false;

  const frag = location.hash.slice(1);
  if (frag) {
    applyLink(frag);
  } else {
    resetForm();
    updateNotes();
    recompute();
  }
}

main();
