// Serving view (task "serving"): latency and throughput against request rate from the analytic
// model (recomputed on every input), and the discrete-event simulator run in a Web Worker.

import {
  DISPATCH_LABELS,
  WEIGHT_TYPES,
  schemaList,
  energyText,
  costText,
  $,
  el,
  banners,
  call,
  clone,
  fmtInt,
  fmtMs,
  fmtNum,
  fmtPct,
  lineChart,
  markStale,
  metric,
  setMetric,
  bandNote,
  bandText,
  showWarnings,
  warningsPanel,
  setRunButtons,
  wireForm,
  showSearchStaleness,
  runSearch,
  takeWorker,
  workerEnvelope,
  Pin,
  searchPanel,
  fillCandidates,
  offer,
  field,
  showFieldError,
  showVerdict,
} from './ui.js';
import { Form } from './form.js';

const P = 'sv';

const FIELDS = [
  { key: 'model', path: 'model', kind: 'spec', label: 'Model' },
  { key: 'hardware', path: 'hardware', kind: 'spec', label: 'GPU' },
  {
    key: 'num_gpus',
    path: 'num_gpus',
    kind: 'int',
    label: 'Number of GPUs',
    min: 1,
    hint: 'num_gpus / TP replicas behind a router',
  },
  { key: 'tp', path: 'parallelism.tp', kind: 'int', label: 'Tensor parallel', min: 1 },
  {
    key: 'pp',
    path: 'parallelism.pp',
    kind: 'int',
    label: 'Pipeline stages',
    optional: true,
    placeholder: '1',
    min: 1,
  },
  {
    key: 'ep',
    path: 'parallelism.ep',
    kind: 'int',
    label: 'Expert-parallel groups (MoE)',
    optional: true,
    placeholder: '1',
    min: 1,
  },
  {
    key: 'redundant_experts',
    path: 'parallelism.redundant_experts',
    kind: 'int',
    label: 'Redundant expert slots (EPLB)',
    optional: true,
    placeholder: '0',
    min: 0,
  },
  {
    key: 'attention_tp',
    path: 'parallelism.attention_tp',
    kind: 'int',
    label: 'GPUs per attention group (DP attention)',
    optional: true,
    placeholder: '1',
    min: 1,
  },
  {
    key: 'dp_attention',
    kind: 'pick',
    optional: true,
    unset: false,
    label: 'Attention across the TP GPUs',
    choices: [
      ['', 'tensor-parallel (heads split)'],
      ['parallelism.dp_attention=true', 'data-parallel (SGLang DP attention)'],
    ],
  },
  {
    key: 'moe_dispatch',
    kind: 'pick',
    optional: true,
    label: 'MoE tokens to experts',
    get choices() {
      return [
        ['', 'by layout'],
        ...schemaList('parallelism', 'moe_dispatch').map((d) => [
          `parallelism.moe_dispatch="${d}"`,
          DISPATCH_LABELS[d] || d,
        ]),
      ];
    },
  },
  // Empty leaves the key out: the model's checkpoint type (DeepSeek-V3/R1 fp8, gpt-oss mxfp4), else bf16.
  {
    key: 'weights',
    kind: 'pick',
    optional: true,
    label: 'Weights',
    get choices() {
      return [['', 'as published'], ...WEIGHT_TYPES.map((t) => [`precision.weights="${t}"`, t])];
    },
  },
  {
    key: 'kv_cache',
    path: 'precision.kv_cache',
    kind: 'choice',
    label: 'KV cache',
    get choices() {
      return schemaList('precision', 'kv_cache');
    },
  },
  // Checkpoints that keep attention unquantized: Meta's Llama 3.1 FP8 and gpt-oss (bf16).
  {
    key: 'attention_weights',
    kind: 'pick',
    optional: true,
    label: 'Attention weights',
    get choices() {
      return [
        ['', 'same as weights'],
        ...schemaList('precision', 'attention_weights').map((t) => [`precision.attention_weights="${t}"`, t]),
      ];
    },
  },
  {
    key: 'engine',
    path: 'engine.name',
    kind: 'choice',
    label: 'Engine profile',
    get choices() {
      return schemaList('engine', 'name');
    },
  },
  {
    key: 'max_num_seqs',
    path: 'engine.max_num_seqs',
    kind: 'int',
    label: 'Max sequences',
    optional: true,
    placeholder: 'engine default',
    min: 1,
  },
  {
    key: 'max_num_batched_tokens',
    path: 'engine.max_num_batched_tokens',
    kind: 'int',
    label: 'Token budget per step',
    optional: true,
    placeholder: 'engine default',
    min: 1,
  },
  {
    key: 'chunked_prefill',
    kind: 'pick',
    optional: true,
    label: 'Chunked prefill',
    choices: [
      ['', 'engine default'],
      ['engine.chunked_prefill=true', 'on'],
      ['engine.chunked_prefill=false', 'off'],
    ],
  },
  {
    key: 'async_scheduling',
    kind: 'pick',
    optional: true,
    label: 'Async scheduling',
    choices: [
      ['', 'engine default'],
      ['engine.async_scheduling=true', 'on'],
      ['engine.async_scheduling=false', 'off'],
    ],
  },
  {
    key: 'cuda_graphs',
    kind: 'pick',
    optional: true,
    label: 'CUDA graphs',
    unset: true,
    choices: [
      ['', 'on (default)'],
      ['engine.cuda_graphs=false', 'off (eager)'],
    ],
  },
  {
    key: 'capacity_policy',
    kind: 'pick',
    optional: true,
    label: 'KV admission',
    choices: [
      ['', 'engine default'],
      ['engine.capacity_policy="max_utilization"', 'max utilization (may preempt)'],
      ['engine.capacity_policy="guaranteed_no_evict"', 'whole sequence reserved'],
    ],
  },
  {
    key: 'arrival',
    path: 'workload.arrival.kind',
    kind: 'choice',
    label: 'Arrivals',
    choices: [
      ['poisson', 'Poisson'],
      ['gamma', 'Gamma (bursty)'],
      ['constant', 'Constant rate'],
    ],
  },
  { key: 'rate', path: 'workload.arrival.rate_per_s', kind: 'num', label: 'Request rate (req/s)', min: 0 },
  {
    key: 'cv',
    path: 'workload.arrival.cv',
    kind: 'num',
    label: 'Burstiness (CV)',
    optional: true,
    placeholder: 'gamma only',
  },
  { key: 'prompt_tokens', path: 'workload.prompt_tokens', kind: 'int', label: 'Prompt tokens', min: 1 },
  { key: 'output_tokens', path: 'workload.output_tokens', kind: 'int', label: 'Output tokens', min: 1 },
  {
    key: 'num_requests',
    path: 'workload.num_requests',
    kind: 'int',
    label: 'Requests to simulate',
    optional: true,
    placeholder: '1000',
    min: 1,
  },
  { key: 'seed', path: 'workload.seed', kind: 'int', label: 'Seed', optional: true, placeholder: '1' },
  {
    key: 'draft',
    kind: 'pick',
    optional: true,
    label: 'Speculative draft',
    choices: [
      ['', 'none'],
      ['features.speculative.draft="mtp"', "the model's own MTP layer (DeepSeek)"],
    ],
  },
  {
    key: 'draft_tokens',
    path: 'features.speculative.num_tokens',
    kind: 'int',
    label: 'Draft tokens per step',
    optional: true,
    placeholder: 'k',
    min: 1,
  },
  {
    key: 'acceptance',
    path: 'features.speculative.acceptance_rate',
    kind: 'num',
    label: 'Acceptance rate',
    optional: true,
    placeholder: '0.85',
    min: 0,
  },
  {
    key: 'prefill_instances',
    path: 'features.disaggregated.prefill_instances',
    kind: 'int',
    label: 'Prefill instances',
    optional: true,
    placeholder: 'collocated',
    min: 1,
  },
  {
    key: 'decode_instances',
    path: 'features.disaggregated.decode_instances',
    kind: 'int',
    label: 'Decode instances',
    optional: true,
    placeholder: 'collocated',
    min: 1,
  },
  {
    key: 'kv_link',
    path: 'features.disaggregated.kv_link_GBps',
    kind: 'num',
    label: 'KV link (GB/s)',
    optional: true,
    placeholder: '50',
  },
  { key: 'slo_ttft', path: 'slo.ttft_ms', kind: 'num', label: 'SLO: TTFT (ms)', optional: true, placeholder: 'none' },
  { key: 'slo_tpot', path: 'slo.tpot_ms', kind: 'num', label: 'SLO: TPOT (ms)', optional: true, placeholder: 'none' },
  {
    key: 'cost',
    path: 'cost_per_gpu_hour_usd',
    kind: 'num',
    label: '$ per GPU-hour',
    optional: true,
    placeholder: 'list price',
  },
];

export const DEFAULT_SERVING = Object.freeze({
  task: 'serving',
  model: 'llama-3.1-8b',
  hardware: 'h100-sxm',
  num_gpus: 1,
  parallelism: { tp: 1 },
  precision: { kv_cache: 'bf16' },
  engine: { name: 'vllm' },
  workload: { arrival: { kind: 'poisson', rate_per_s: 10 }, prompt_tokens: 512, output_tokens: 128 },
});

/** A search row's launch command for one replica in `engine` (vllm, sglang or trtllm; vLLM for
 * the generic profile), from its `launch` flags; the checkpoint (and so the weights' type) is the
 * user's. TensorRT-LLM's YAML options go in through bash's process substitution: one line. */
function launchCommand(launch, engine) {
  if (engine === 'sglang') return `python -m sglang.launch_server --model-path <checkpoint> ${launch.sglang}`;
  if (engine === 'trtllm') {
    const yaml = launch.trtllm_extra_llm_api_options;
    const extra = yaml ? ` --extra_llm_api_options <(printf '${yaml.replaceAll('\n', '\\n')}')` : '';
    return `trtllm-serve <checkpoint> ${launch.trtllm}${extra}`;
  }
  return `vllm serve <checkpoint> ${launch.vllm}`;
}

/** A disaggregated setup's instances (features.disaggregated or a search row's split). */
const poolsText = (d) => `${d.prefill_instances} prefill + ${d.decode_instances} decode`;

// Fractions of the saturation rate swept for the curves: dense where the queues build up.
const SWEEP = [0.05, 0.15, 0.3, 0.45, 0.6, 0.7, 0.78, 0.85, 0.9, 0.94, 0.97, 1.1, 1.3];
const METRICS = [
  ['ttft', 'TTFT', 'ttft_ms'],
  ['tpot', 'TPOT', 'tpot_ms'],
  ['e2e', 'E2E', 'e2e_ms'],
];

export class ServingView {
  constructor(root, { M, presets }) {
    Object.assign(this, {
      root,
      M,
      presets,
      request: null,
      result: null,
      sweep: [],
      linkErrors: new Map(),
      general: [],
    });
    this.form = new Form({ prefix: P, M, presets, fields: FIELDS });
    const p50 = (key) => (r) => r[key]?.p50;
    const ms = (v) => fmtMs(v).join(' ');
    this.pin = new Pin(P, [
      ['ttft', p50('ttft_ms'), true, ms],
      ['tpot', p50('tpot_ms'), true, ms],
      ['e2e', p50('e2e_ms'), true, ms],
      ['thr', (r) => r.throughput?.output_tokens_per_s, false, fmtNum],
      ['sat', (r) => r.saturation_rate_per_s, false, fmtNum],
    ]);
    this.generation = 0;
    this.sim = { worker: null, id: 0, timer: null, result: null };
    this.build();
    this.reset();
    this.spawnWorker();
  }

  spawnWorker() {
    this.sim.worker = takeWorker();
    this.sim.worker.onmessage = (e) => this.onSimMessage(e.data);
    this.sim.worker.onerror = (e) => {
      e.preventDefault();
      this.cancel(`The simulation worker failed: ${e.message || 'unknown error'}`);
    };
  }

  build() {
    const f = (k) => this.form.render(k);
    const row = (cls, ...kids) => el('div', { class: `row ${cls}` }, ...kids);
    const form = el(
      'form',
      { class: 'panel setup', id: `${P}-form`, autocomplete: 'off', novalidate: true },
      el('h2', { text: 'Serving setup' }),
      el(
        'fieldset',
        null,
        el('legend', { text: 'Model and GPUs' }),
        f('model'),
        f('hardware'),
        row('three', f('num_gpus'), f('tp'), f('pp')),
        row('three', f('ep'), f('dp_attention'), f('moe_dispatch')),
        row('', f('attention_tp'), f('redundant_experts')),
        row('three', f('weights'), f('attention_weights'), f('kv_cache')),
        row('three', f('prefill_instances'), f('decode_instances'), f('kv_link')),
      ),
      el(
        'fieldset',
        null,
        el('legend', { text: 'Engine' }),
        row('', f('engine'), f('chunked_prefill'), f('async_scheduling')),
        row('', f('cuda_graphs'), f('capacity_policy')),
        row('', f('max_num_seqs'), f('max_num_batched_tokens')),
        f('draft'),
        row('', f('draft_tokens'), f('acceptance')),
      ),
      el(
        'fieldset',
        null,
        el('legend', { text: 'Traffic' }),
        row('', f('arrival'), f('rate')),
        f('cv'),
        row('', f('prompt_tokens'), f('output_tokens')),
        row('', f('slo_ttft'), f('slo_tpot')),
        f('cost'),
      ),
      el(
        'fieldset',
        null,
        el('legend', { text: 'Simulation' }),
        row('', f('num_requests'), f('seed')),
        el('p', { class: 'hint', id: `${P}-extras` }),
      ),
    );
    // Replicas of TP × PP GPUs: a larger replica raises the GPU count.
    this.form.keepCount('num_gpus', ['tp', 'pp']);
    wireForm(form, this, () => {
      this.simError = null;
      this.recompute();
    });

    const m = (id, label, sub) => metric(P, id, label, { sub });
    const results = el(
      'section',
      { class: 'results', id: `${P}-results` },
      el(
        'div',
        { class: 'results-head' },
        el('h2', { text: 'Serving under load' }),
        el('p', { class: 'subtitle', id: `${P}-subtitle` }),
        el('span', { class: 'badge', id: `${P}-saturated`, text: '—' }),
        this.pin.button,
      ),
      this.pin.note,
      ...banners(P),
      el('div', { class: 'unfit-verdict', id: `${P}-unfit`, role: 'status', hidden: true }),
      el(
        'div',
        { class: 'headline wide', id: `${P}-headline` },
        m('ttft', 'TTFT p50', ''),
        m('tpot', 'TPOT p50', ''),
        m('e2e', 'E2E p50', ''),
        m('thr', 'Output throughput', ''),
        m('sat', 'Saturation rate', ''),
        m('util', 'Utilization', 'offered / saturation'),
      ),
      bandNote(),
      el(
        'div',
        { class: 'panel', id: `${P}-curves` },
        el(
          'div',
          { class: 'panel-head' },
          el(
            'h3',
            null,
            'Latency and throughput against request rate ',
            el('span', { class: 'muted', text: '(analytic model; solid p50, dashed p99)' }),
          ),
        ),
        el('div', { class: 'charts', id: `${P}-charts` }),
      ),
      this.buildSimPanel(),
      searchPanel(
        P,
        'Best setups for this load',
        'Find the best setup',
        'Prices every tensor and pipeline parallel size these GPUs allow (the rest as replicas; for a MoE model also expert parallelism and DP attention), max sequences and token budget with the analytic model at this load, and lists those that keep up and meet the SLOs (p90) with the most capacity first: max req/s is the saturation rate, tok/s/GPU the output tokens per GPU there, tok/s/user one over the mean TPOT at this load.',
        el(
          'label',
          { class: 'check' },
          el('input', { type: 'checkbox', id: `${P}-search-disagg` }),
          ' Also try disaggregated prefill and decode instances (every split of the GPUs, pp 1)',
        ),
        el(
          'label',
          { class: 'check' },
          el('input', { type: 'checkbox', id: `${P}-search-fewest` }),
          ' Fewest GPUs for this load: search the GPU count too, up to the GPUs above (1 to 8, then multiples of 8)',
        ),
        field(
          `${P}-search-hardware`,
          'Compare GPU types at their prices (optional): id:GPUs:$ per GPU-hour, comma-separated',
          el('input', {
            type: 'text',
            placeholder: 'h100-sxm:8:2.49, b200:8:5.5',
            spellcheck: 'false',
            autocomplete: 'off',
          }),
        ),
        el('p', { class: 'hint', id: `${P}-frontier` }),
        el('div', { id: `${P}-frontier-chart` }),
      ),
      warningsPanel(P),
    );
    this.root.replaceChildren(form, results);
    $(`${P}-search-run`).addEventListener('click', () => this.search());
    // Other GPU types than the ones searched, or the splits turned on or off: the table no
    // longer answers the search. The box's error goes while it is edited (checked again at the
    // next search).
    const restale = () => {
      if (this.searchKey) showSearchStaleness(P, this.searchKey, this.searchRequest(), this.searchNote);
    };
    $(`${P}-search-hardware`).addEventListener('input', () => {
      showFieldError(`${P}-search-hardware`, '');
      restale();
    });
    $(`${P}-search-disagg`).addEventListener('change', restale);
    $(`${P}-search-fewest`).addEventListener('change', restale);
    this.pin.attach(this, () => $(`${P}-subtitle`).textContent);
    $(`${P}-simulate`).addEventListener('click', () => this.simulate());
    $(`${P}-cancel`).addEventListener('click', () => this.cancel('Cancelled.'));
  }

  buildSimPanel() {
    return el(
      'div',
      { class: 'panel', id: `${P}-sim` },
      el(
        'div',
        { class: 'panel-head' },
        el(
          'h3',
          null,
          'Discrete-event simulation ',
          el('span', { class: 'muted', text: '(seeded; same numbers as the CLI)' }),
        ),
        el(
          'div',
          { class: 'sim-controls' },
          el('button', { type: 'button', id: `${P}-simulate`, text: 'Simulate' }),
          el('button', { type: 'button', id: `${P}-cancel`, class: 'secondary', text: 'Cancel', hidden: true }),
        ),
      ),
      el(
        'div',
        { class: 'sim-progress', id: `${P}-progress`, hidden: true },
        el('progress', { id: `${P}-progress-bar`, 'aria-label': 'Simulation running' }),
        el('span', { id: `${P}-elapsed`, class: 'muted' }),
      ),
      el('p', {
        class: 'sim-status',
        id: `${P}-sim-status`,
        role: 'status',
        text: 'Runs the simulator for the setup above in a background worker.',
      }),
      el('div', { id: `${P}-sim-out` }),
    );
  }

  reset() {
    this.form.reset(DEFAULT_SERVING);
  }

  /**
   * The search request of a built setup (the form's, by default): tp, pp and the engine limits
   * left to the search; null while a field is invalid.
   */
  searchRequest({ request, inputErrors } = this.form.build({ task: 'serving', mode: 'analytic' }), loud = false) {
    if (inputErrors.size > 0) return null;
    const q = clone(request);
    delete q.parallelism; // tp, pp, ep and DP attention are the search's
    if (q.engine) {
      delete q.engine.max_num_seqs;
      delete q.engine.max_num_batched_tokens;
    }
    const search = { target: 'serving', top: 10 };
    // The search splits the GPUs itself: the setup's instances go, its KV link stays for the
    // splits it tries (and goes with them when they are not tried).
    const link = q.features?.disaggregated?.kv_link_GBps;
    if (q.features) delete q.features.disaggregated;
    if ($(`${P}-search-fewest`)?.checked) search.fewest_gpus = true;
    if ($(`${P}-search-disagg`)?.checked) {
      search.disaggregated = [false, true];
      if (link !== undefined) q.features = { ...q.features, disaggregated: { kv_link_GBps: link } };
    }
    if (q.features && Object.keys(q.features).length === 0) delete q.features;
    const offers = this.searchOffers(loud);
    if (offers === null) return null;
    if (offers.length) {
      // The GPU types replace the setup's own hardware, GPU count and price.
      delete q.hardware;
      delete q.num_gpus;
      delete q.cost_per_gpu_hour_usd;
      search.hardware = offers;
    }
    return { ...q, task: 'search', search };
  }

  /** The box of GPU types to compare as search.hardware entries ([] when empty, null when an
   * entry is not id:GPUs:price; `loud`: the reason shows beside the box). */
  searchOffers(loud) {
    const input = $(`${P}-search-hardware`);
    const entries = (input?.value ?? '')
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    let problem = '';
    const offers = entries.map((entry) => {
      const parts = entry.split(':').map((x) => x.trim());
      const gpus = Number(parts[1]);
      const usd = Number(parts[2]);
      if (parts.length !== 3 || !parts[0] || !Number.isInteger(gpus) || !(gpus >= 1) || !(usd > 0)) {
        problem ||= `"${entry}": expected id:GPUs:price, e.g. h100-sxm:8:2.49 (GPUs a whole number >= 1, price > 0)`;
      }
      return { hardware: parts[0], num_gpus: gpus, cost_per_gpu_hour_usd: usd };
    });
    if (input && loud) showFieldError(`${P}-search-hardware`, problem);
    return problem ? null : offers;
  }

  /** Task "search", target "serving": the setups with the most capacity that meet the SLOs, found
   * in the search worker. */
  search() {
    const q = this.searchRequest(undefined, true);
    $(`${P}-frontier`).textContent = '';
    $(`${P}-frontier-chart`).replaceChildren();
    runSearch(
      P,
      q,
      (res, seconds) => this.showSearch(q, res, seconds),
      // An entry of the GPU-type box the module refused ("search.hardware[1].hardware: unknown
      // hardware preset ...") is shown beside the box, as its own format errors are.
      (error) => {
        if (error.path?.startsWith('search.hardware')) showFieldError(`${P}-search-hardware`, error.message);
      },
    );
  }

  showSearch(q, res, seconds) {
    const note = $(`${P}-search-note`);
    const table = $(`${P}-search-table`);
    const frontier = $(`${P}-frontier`);
    this.searchKey = JSON.stringify(q);
    const rejected = res.rejected.map((x) => `${fmtInt(x.count)} ${x.reason}`).join('; ');
    // search.fewest_gpus: the count found (the rows deploy on it) and the counts searched.
    const fewest =
      'num_gpus' in res
        ? `${res.num_gpus === null ? `No GPU count up to ${fmtInt(q.num_gpus)} meets the SLOs` : `Fewest GPUs meeting the SLOs: ${fmtInt(res.num_gpus)}`} (counts searched: ${res.num_gpus_tried.join(', ')}). `
        : '';
    this.searchNote =
      fewest +
      `${fmtInt(res.evaluated)} setups considered, ${fmtInt(res.keeping_up)} keep up with this load, ${fmtInt(res.meeting_slo)} meet the SLOs.` +
      (res.warnings.length ? ` ${res.warnings.join(' ')}.` : '') +
      (rejected ? ` Rejected: ${rejected}.` : '') +
      ` Searched in ${seconds.toFixed(1)} s.`;
    note.textContent = this.searchNote;
    // Replicas, or a disaggregated setup's prefill and decode instances.
    const instances = (c) => (c.disaggregated ? poolsText(c.disaggregated) : String(c.replicas));
    const layout = (c) =>
      `TP ${c.parallelism.tp}${c.parallelism.pp ? ` × PP ${c.parallelism.pp}` : ''}${c.parallelism.ep ? ` EP ${c.parallelism.ep}` : ''}${c.parallelism.redundant_experts ? ` (+${c.parallelism.redundant_experts} redundant slots)` : ''}${c.parallelism.dp_attention ? ' DP attention' : ''}, ${c.disaggregated ? `${instances(c)} instances` : `${c.replicas} replica${c.replicas > 1 ? 's' : ''}`}`;
    // Several GPU types: which one, and the output tokens a dollar buys at capacity.
    const priced = Boolean(q.search.hardware);
    const gpu = (c) => `${typeof c.hardware === 'string' ? c.hardware : 'custom'} ×${c.num_gpus}`;
    frontier.textContent = !res.frontier.length
      ? ''
      : priced
        ? `Frontier, tokens per dollar against speed per user: ${res.frontier.map((c) => `${gpu(c)} ${layout(c)} (max ${fmtInt(c.max_num_seqs)} seqs): ${fmtNum(c.output_tokens_per_usd)} tokens per $ at ${fmtNum(c.tokens_per_s_per_user)} tok/s per user`).join('; ')}.`
        : `Frontier, capacity per GPU against speed per user: ${res.frontier.map((c) => `${layout(c)} (max ${fmtInt(c.max_num_seqs)} seqs): ${fmtNum(c.capacity_output_tokens_per_s_per_gpu)} tok/s per GPU at ${fmtNum(c.tokens_per_s_per_user)} tok/s per user`).join('; ')}.`;
    // Axis ticks of up to four characters (a million tokens per dollar is "1M").
    const compact = (v) =>
      v >= 1e6
        ? `${Number((v / 1e6).toPrecision(3))}M`
        : v >= 1e4
          ? `${Number((v / 1e3).toPrecision(3))}k`
          : String(Number(v.toPrecision(3)));
    // The frontier as a chart: speed per user across, what it costs up; the listed setups as dots.
    const yOf = priced ? (c) => c.output_tokens_per_usd_low : (c) => c.capacity_output_tokens_per_s_per_gpu;
    const name = (c) => `${priced ? `${gpu(c)} ` : ''}${layout(c)}, max ${fmtInt(c.max_num_seqs)} seqs`;
    const dot = (c) =>
      `${name(c)}: ${fmtNum(yOf(c))} ${priced ? 'tokens per $ (80 % low)' : 'tok/s per GPU'} at ${fmtNum(c.tokens_per_s_per_user)} tok/s per user`;
    const front = [...res.frontier].sort((a, b) => a.tokens_per_s_per_user - b.tokens_per_s_per_user);
    $(`${P}-frontier-chart`).replaceChildren(
      ...(front.length
        ? [
            lineChart({
              title: priced
                ? 'Tokens per dollar (80 % band low) vs speed per user'
                : 'Capacity per GPU vs speed per user',
              xLabel: 'output tok/s per user',
              yLabel: priced ? 'tokens per $' : 'tok/s per GPU',
              yFmt: compact,
              series: [
                // The listed setups first: the frontier is drawn over them.
                {
                  label: 'listed setups',
                  cls: 's2',
                  line: false,
                  dots: true,
                  points: res.candidates.map((c) => [c.tokens_per_s_per_user, yOf(c)]),
                  titles: res.candidates.map(dot),
                },
                {
                  label: 'frontier',
                  cls: 's1',
                  dots: true,
                  points: front.map((c) => [c.tokens_per_s_per_user, yOf(c)]),
                  titles: front.map(dot),
                },
              ],
            }),
          ]
        : []),
    );
    // The layout columns that vary: a dense model's rows all have PP 1, EP 1 and TP attention.
    const varies = (f) => res.candidates.some((c) => f(c.parallelism));
    const layoutColumns = [
      ['TP', () => true, (p) => p.tp],
      ['PP', varies((p) => (p.pp ?? 1) !== 1), (p) => p.pp ?? 1],
      [
        'EP',
        varies((p) => (p.ep ?? 1) !== 1),
        (p) => (p.redundant_experts ? `${p.ep}+${p.redundant_experts}` : (p.ep ?? 1)),
      ],
      ['Attn', varies((p) => p.dp_attention), (p) => (p.dp_attention ? 'DP' : 'TP')],
    ].filter(([, shown]) => shown);
    // Ranked by the tokens a dollar buys at the low edge of the throughput's 80 % band: a GPU type
    // whose measured runs were slower than estimated is not put first on its estimate.
    const before = [
      '#',
      ...(priced ? ['GPU', 'Tok per $', 'at 80 % low'] : []),
      ...layoutColumns.map(([h]) => h),
      'Replicas',
    ];
    const head = [
      ...before,
      'Max seqs',
      'Token budget',
      'Max req/s',
      'Tok/s per GPU',
      'Tok/s per user',
      'TTFT p90',
      'TPOT p90',
      '',
    ];
    fillCandidates(
      table,
      head,
      before.length,
      res.candidates,
      (c) => [
        ...(priced
          ? [
              el('td', { text: gpu(c) }),
              el('td', { class: 'num', text: fmtNum(c.output_tokens_per_usd) }),
              el('td', { class: 'num', text: fmtNum(c.output_tokens_per_usd_low) }),
            ]
          : []),
        ...layoutColumns.map(([, , value]) => el('td', { text: String(value(c.parallelism)) })),
        el('td', { text: instances(c) }),
        el('td', { class: 'num', text: String(c.max_num_seqs) }),
        el('td', { class: 'num', text: String(c.max_num_batched_tokens) }),
        el('td', {
          class: 'num',
          'data-value': String(c.saturation_rate_per_s),
          text: fmtNum(c.saturation_rate_per_s),
        }),
        el('td', { class: 'num', text: fmtNum(c.capacity_output_tokens_per_s_per_gpu) }),
        el('td', { class: 'num', text: fmtNum(c.tokens_per_s_per_user) }),
        el('td', { class: 'num', text: fmtMs(c.ttft_ms.p90).join(' ') }),
        el('td', { class: 'num', text: fmtMs(c.tpot_ms.p90).join(' ') }),
      ],
      (r) => this.applyRequest(r),
      this.M,
      // One replica's launch flags in each engine (the weights' type is the checkpoint's).
      [
        [
          'Launch',
          'Engine launch command for candidate',
          (c) => offer(launchCommand(c.launch, c.request.engine?.name), 'Launch command ready'),
        ],
      ],
    );
  }

  applyRequest(request) {
    this.reset();
    this.form.clearOptional();
    ({ linkErrors: this.linkErrors, general: this.general } = this.form.applyLink(request));
    this.recompute();
  }

  recompute() {
    const built = this.form.build({ task: 'serving', mode: 'analytic' });
    const { request, inputErrors } = built;
    if (this.searchKey) showSearchStaleness(P, this.searchKey, this.searchRequest(built), this.searchNote);
    this.request = request;
    const errors = new Map([...this.linkErrors, ...inputErrors]);
    const general = [...this.general];
    // A simulation-only error (e.g. too many requests) stays beside its field until the next edit.
    if (this.simError) {
      if (this.simError.target === 'general') general.push(this.simError.message);
      else errors.set(this.simError.target, this.simError.message);
    }
    const result = inputErrors.size === 0 ? this.form.estimate(request, errors, general) : null;
    const stale = !result || this.linkErrors.size > 0;
    this.form.showErrors(errors, general);
    markStale(this, P, stale);
    $(`${P}-stale`).textContent = 'Results are out of date — fix the highlighted fields to recompute.';
    $(`${P}-simulate`).disabled = stale || Boolean(this.sim.worker && this.sim.busy);
    if (this.sim.result) $(`${P}-sim`).classList.add('outdated');
    if (stale) return;
    this.result = result;
    this.renderHeadline(result);
    this.scheduleSweep(request, result);
  }

  renderHeadline(res) {
    this.root.dataset.renders = String(Number(this.root.dataset.renders || 0) + 1);
    const split = this.request.features?.disaggregated;
    const instances = split
      ? `${poolsText(split)} instances`
      : `${res.replicas} ${res.replicas === 1 ? 'replica' : 'replicas'}`;
    $(`${P}-subtitle`).textContent =
      `${res.model?.name} on ${res.num_gpus} × ${res.hardware?.name} · ${instances} · ` +
      `${res.engine?.name} · at ${fmtNum(this.request.workload.arrival.rate_per_s)} req/s`;
    const badge = $(`${P}-saturated`);
    badge.className = `badge ${res.saturated ? 'bad' : 'ok'}`;
    badge.textContent = !res.fits ? 'Does not fit' : res.saturated ? 'Overloaded' : 'Stable';
    badge.dataset.saturated = String(res.saturated);
    // A setup that does not fit serves nothing: a verdict, not zeros and empty curves.
    showVerdict(
      `${P}-unfit`,
      res.fits === false
        ? `Does not fit: ${res.unfit_reason}, so no latency or ` +
            'throughput is shown. The Inference tab, with this model and GPU, offers the changes that fit.'
        : null,
      `${P}-headline`,
      `${P}-curves`,
    );
    const set = (...args) => setMetric(P, ...args);
    const iv = res.interval || {};
    const ms = (x) => fmtMs(x).join(' ');
    for (const [id, , key] of METRICS) {
      const v = res[key];
      set(
        id,
        v ? v.p50 : null,
        v ? fmtMs(v.p50) : ['—', ''],
        v ? `p99 ${ms(v.p99)}${bandText(iv[key]?.p50, ms)}` : 'no steady state: overloaded',
      );
    }
    set(
      'thr',
      res.throughput.output_tokens_per_s,
      [fmtNum(res.throughput.output_tokens_per_s), 'tok/s'],
      `${fmtNum(res.throughput.requests_per_s)} req/s` +
        bandText(iv.output_tokens_per_s, fmtNum) +
        costText(res) +
        energyText(res.energy),
    );
    // Disaggregated: the rate at which each pool saturates (the system's is the smaller).
    const pool = (name) => res.assumptions?.find((a) => a.name === `${name}_pool_saturation_rate`)?.value;
    set(
      'sat',
      res.saturation_rate_per_s,
      [fmtNum(res.saturation_rate_per_s), 'req/s'],
      pool('prefill') === undefined
        ? `decode batch ${fmtNum(res.batch?.mean_size)} at your rate`
        : `prefill pool ${fmtNum(pool('prefill'))}, decode pool ${fmtNum(pool('decode'))} req/s`,
    );
    set('util', res.utilization, [fmtPct(res.utilization), '']);
    this.pin.render(res);
    showWarnings(P, res.warnings);
  }

  // The sweep (a dozen analytic estimates) runs after the headline, off the input event, and an
  // edit made meanwhile abandons it.
  scheduleSweep(request, res) {
    const gen = ++this.generation;
    this.root.dataset.sweep = 'pending';
    setTimeout(() => {
      if (gen !== this.generation) return;
      const sat = res.saturation_rate_per_s;
      const rates = [...new Set([...SWEEP.map((u) => u * sat), request.workload.arrival.rate_per_s])].sort(
        (a, b) => a - b,
      );
      const points = [];
      for (const rate of rates) {
        if (!(rate > 0)) continue;
        const q = clone(request);
        q.workload.arrival.rate_per_s = Number(rate.toPrecision(6));
        const r = call(this.M, 'estimate', JSON.stringify(q));
        if (r.ok) points.push({ rate: q.workload.arrival.rate_per_s, res: r.result });
      }
      this.sweep = points;
      this.renderCurves(points, sat, request.workload.arrival.rate_per_s);
      this.root.dataset.sweep = 'done';
    }, 0);
  }

  renderCurves(points, sat, rate) {
    const markers = [
      { x: sat, label: `saturation ${fmtNum(sat)}/s`, cls: 'saturation' },
      { x: rate, label: 'you', cls: 'current' },
    ];
    const stable = points.filter((p) => !p.res.saturated);
    // Latency explodes at saturation: clip the y axis at twice the p99 seen at 85% load.
    const clipAt = (key) =>
      2 * Math.max(...stable.filter((p) => p.rate <= 0.86 * sat).map((p) => p.res[key]?.p99 || 0), 1e-9);
    const charts = METRICS.map(([, label, key]) =>
      lineChart({
        title: `${label} (ms)`,
        xLabel: 'requests/s',
        yLabel: 'ms',
        markers,
        yMax: clipAt(key),
        series: [
          { label: 'p50', cls: 's1', points: stable.map((p) => [p.rate, p.res[key]?.p50]) },
          { label: 'p99', cls: 's1', dash: true, points: stable.map((p) => [p.rate, p.res[key]?.p99]) },
        ],
      }),
    );
    charts.push(
      lineChart({
        title: 'Throughput (output tokens/s)',
        xLabel: 'requests/s',
        yLabel: 'tok/s',
        markers,
        series: [
          {
            label: 'output tokens/s',
            cls: 's2',
            points: points.map((p) => [p.rate, p.res.throughput.output_tokens_per_s]),
          },
        ],
      }),
    );
    charts.forEach((c, i) => {
      c.dataset.chart = ['ttft', 'tpot', 'e2e', 'throughput'][i];
    });
    $(`${P}-charts`).replaceChildren(...charts);
  }

  // ---------------------------------------------------------------- simulation

  simulate() {
    if (this.root.dataset.status !== 'ready') return;
    const request = { ...clone(this.request), mode: 'simulate' };
    if (!this.sim.worker) this.spawnWorker();
    const id = ++this.sim.id;
    this.sim.busy = true;
    this.sim.started = performance.now();
    this.sim.request = request;
    this.setSimRunning(true, `Simulating ${fmtInt(request.workload.num_requests ?? 1000)} requests…`);
    this.sim.timer = setInterval(() => this.tick(), 100);
    this.tick();
    this.sim.worker.postMessage({ id, request: JSON.stringify(request) });
  }

  tick() {
    $(`${P}-elapsed`).textContent = `${((performance.now() - this.sim.started) / 1000).toFixed(1)} s`;
  }

  /**
   * Stops a running simulation by ending its worker (the module has no way to interrupt a run).
   * The next worker is started on the next Simulate: the one request a page makes after load,
   * served from the browser's cache of the same files.
   */
  cancel(message) {
    if (this.sim.worker) this.sim.worker.terminate();
    this.sim.worker = null;
    this.sim.id += 1;
    this.setSimRunning(false, message);
    $(`${P}-sim`).dataset.state = 'cancelled';
  }

  setSimRunning(running, message) {
    clearInterval(this.sim.timer);
    this.sim.busy = running;
    $(`${P}-progress`).hidden = !running;
    setRunButtons($(`${P}-simulate`), $(`${P}-cancel`), running, this.root.dataset.status !== 'ready');
    $(`${P}-sim-status`).textContent = message;
    $(`${P}-sim`).dataset.state = running ? 'running' : 'idle';
  }

  onSimMessage({ id, out, ms }) {
    if (id !== this.sim.id) return;
    const env = workerEnvelope(out, 'simulator');
    if (!env.ok) {
      this.setSimRunning(false, `The simulation failed: ${env.error.message}`);
      this.simError = { target: this.form.target(env.error.path), message: env.error.message };
      this.recompute();
      $(`${P}-sim`).dataset.state = 'error';
      return;
    }
    const res = env.result;
    this.sim.result = res;
    const s = res.simulation || {};
    this.setSimRunning(
      false,
      `Simulated ${fmtInt(s.completed)} of ${fmtInt(s.num_requests)} requests (${fmtNum(s.simulated_s)} s of traffic, ` +
        `${fmtInt(s.steps)} steps) in ${(ms / 1000).toFixed(2)} s.`,
    );
    $(`${P}-sim`).dataset.state = 'done';
    // Inputs edited during the run: the result is for the setup the run started with.
    const current = JSON.stringify({ ...this.request, mode: 'simulate' }) === JSON.stringify(this.sim.request);
    $(`${P}-sim`).classList.toggle('outdated', !current);
    this.renderSim(res);
  }

  renderSim(res) {
    const rows = [
      ['ttft_ms', 'TTFT'],
      ['tpot_ms', 'TPOT'],
      ['e2e_ms', 'E2E'],
      ['queueing_ms', 'Queueing'],
    ];
    const table = el(
      'table',
      { class: 'breakdown', id: `${P}-percentiles` },
      el(
        'thead',
        null,
        el(
          'tr',
          null,
          el('th', { scope: 'col', text: 'Latency' }),
          ...['mean', 'p50', 'p90', 'p99'].map((h) => el('th', { scope: 'col', class: 'num', text: h })),
        ),
      ),
      el(
        'tbody',
        null,
        ...rows.map(([key, label]) =>
          el(
            'tr',
            { 'data-key': key },
            el('th', { scope: 'row', text: label }),
            ...['mean', 'p50', 'p90', 'p99'].map((p) =>
              el('td', {
                class: 'num',
                'data-value': String(res[key]?.[p]),
                text: res[key] ? fmtMs(res[key][p]).join(' ') : '—',
              }),
            ),
          ),
        ),
      ),
    );
    const thr = res.throughput || {};
    const facts = [
      ['Requests/s', fmtNum(thr.requests_per_s)],
      ['Output tokens/s', fmtNum(thr.output_tokens_per_s)],
      ['Input tokens/s', fmtNum(thr.input_tokens_per_s)],
      ['Preemptions', fmtInt(res.preemptions)],
      ['Mean batch', fmtNum(res.batch?.mean_size)],
      ['Peak KV use', fmtPct(res.kv_cache?.peak_use)],
      [
        'Goodput',
        res.goodput?.fraction == null
          ? 'no SLO set'
          : `${fmtPct(res.goodput.fraction)} (${fmtNum(res.goodput.requests_per_s)} req/s)`,
      ],
      ['Rejected', fmtInt(res.simulation?.rejected)],
    ];
    // A hybrid model's running requests each hold their fixed (Mamba-2 / gated DeltaNet) state in the KV pool's blocks.
    const state = res.kv_cache?.state_MB_per_request;
    if (state > 0) facts.splice(6, 0, ['Recurrent state per request', `${fmtNum(state)} MB`]);
    const tl = res.timeline || { t_s: [] };
    const timeline = el(
      'div',
      { class: 'charts two' },
      lineChart({
        title: 'Batch size and waiting requests',
        xLabel: 'time (s)',
        yLabel: 'requests',
        series: [
          { label: 'batch size', cls: 's1', points: tl.t_s.map((t, i) => [t, tl.batch_size[i]]) },
          { label: 'waiting', cls: 's3', points: tl.t_s.map((t, i) => [t, tl.waiting[i]]) },
        ],
      }),
      lineChart({
        title: 'KV cache in use (%)',
        xLabel: 'time (s)',
        yLabel: '%',
        series: [{ label: 'KV blocks used', cls: 's2', points: tl.t_s.map((t, i) => [t, 100 * tl.kv_use[i]]) }],
      }),
    );
    $(`${P}-sim-out`).replaceChildren(
      el('div', { class: 'table-wrap' }, table),
      el(
        'dl',
        { class: 'facts' },
        ...facts.map(([dt, dd]) => el('div', null, el('dt', { text: dt }), el('dd', { text: dd }))),
      ),
      el('p', {
        class: 'hint outdated-note',
        text: 'These simulated numbers are for the setup before your last edit: simulate again.',
      }),
      timeline,
    );
  }
}
