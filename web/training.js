// Training view (task "training"): step time, throughput, MFU/HFU, total time and the memory
// stack per GPU for a model, a cluster and a parallelism layout. Recomputes on every input.

import {
  $,
  call,
  el,
  svg,
  banners,
  clone,
  fmtGB,
  fmtInt,
  fmtMs,
  fmtNum,
  fmtPct,
  markStale,
  metric,
  setMetric,
  bandNote,
  bandText,
  showWarnings,
  warningsPanel,
  wireForm,
  showSearchStaleness,
  runSearch,
  Pin,
  searchPanel,
  fillCandidates,
  schemaList,
  showVerdict,
  field,
  showFieldError,
} from './ui.js';
import { Form } from './form.js';

const P = 'tr';

// The layout dimensions the search's sizes boxes pin (search.tp …): label, request key.
const PINS = [
  ['TP', 'tp'],
  ['PP', 'pp'],
  ['CP', 'cp'],
  ['EP', 'ep'],
];

const SHARDING = [
  ['parallelism.zero=0', 'None (plain DDP)'],
  ['parallelism.zero=1', 'ZeRO-1 (optimizer)'],
  ['parallelism.zero=2', 'ZeRO-2 (+ gradients)'],
  ['parallelism.zero=3', 'ZeRO-3 (+ weights)'],
  ['parallelism.fsdp="full_shard"', 'FSDP full shard'],
  ['parallelism.fsdp="shard_grad_op"', 'FSDP grad-op shard'],
  ['parallelism.fsdp="hybrid_shard"', 'FSDP hybrid shard'],
  ['parallelism.fsdp="no_shard"', 'FSDP no shard'],
];

const FIELDS = [
  { key: 'model', path: 'model', kind: 'spec', label: 'Model' },
  { key: 'hardware', path: 'hardware', kind: 'spec', label: 'GPU' },
  { key: 'num_gpus', path: 'num_gpus', kind: 'int', label: 'Number of GPUs', min: 1 },
  {
    key: 'gpus_per_node',
    path: 'gpus_per_node',
    kind: 'int',
    label: 'GPUs per node',
    optional: true,
    placeholder: 'GPU default',
    min: 1,
  },
  { key: 'tp', path: 'parallelism.tp', kind: 'int', label: 'Tensor (TP)', min: 1 },
  { key: 'pp', path: 'parallelism.pp', kind: 'int', label: 'Pipeline (PP)', min: 1 },
  {
    key: 'dp',
    path: 'parallelism.dp',
    kind: 'int',
    label: 'Data (DP)',
    optional: true,
    placeholder: 'the rest',
    min: 1,
  },
  { key: 'cp', path: 'parallelism.cp', kind: 'int', label: 'Context (CP)', min: 1 },
  { key: 'ep', path: 'parallelism.ep', kind: 'int', label: 'Expert (EP)', min: 1 },
  { key: 'vpp', path: 'parallelism.vpp', kind: 'int', label: 'Virtual stages', min: 1 },
  {
    key: 'first_stage_layers',
    path: 'parallelism.first_stage_layers',
    kind: 'int',
    label: 'First-stage layers',
    optional: true,
    placeholder: 'even',
    min: 1,
  },
  {
    key: 'last_stage_layers',
    path: 'parallelism.last_stage_layers',
    kind: 'int',
    label: 'Last-stage layers',
    optional: true,
    placeholder: 'even',
    min: 1,
  },
  { key: 'sp', path: 'parallelism.sp', kind: 'bool', label: 'Sequence parallelism (with TP)' },
  {
    key: 'tp_comm_overlap',
    path: 'parallelism.tp_comm_overlap',
    kind: 'bool',
    label: 'TP communication overlapped with GEMMs (Transformer Engine)',
  },
  {
    key: 'ep_comm_overlap',
    path: 'parallelism.ep_comm_overlap',
    kind: 'bool',
    label: 'EP all-to-all overlapped with another micro-batch (DualPipe)',
  },
  { key: 'sharding', kind: 'pick', label: 'Sharding (ZeRO / FSDP)', choices: SHARDING },
  { key: 'seq_len', path: 'workload.seq_len', kind: 'int', label: 'Sequence length', min: 1 },
  {
    key: 'global_batch_size',
    path: 'workload.global_batch_size',
    kind: 'int',
    label: 'Global batch (sequences)',
    min: 1,
  },
  {
    key: 'micro_batch_size',
    path: 'workload.micro_batch_size',
    kind: 'int',
    label: 'Micro-batch',
    optional: true,
    placeholder: 'search',
    min: 1,
  },
  {
    key: 'total_tokens',
    path: 'workload.total_tokens',
    kind: 'num',
    label: 'Total tokens',
    optional: true,
    placeholder: 'e.g. 1e12',
  },
  {
    key: 'recompute',
    path: 'workload.recompute',
    kind: 'choice',
    label: 'Activation recomputation',
    get choices() {
      return schemaList('workload', 'recompute');
    },
  },
  {
    key: 'mtp_layers',
    path: 'workload.mtp_layers',
    kind: 'int',
    label: 'MTP modules trained',
    optional: true,
    placeholder: "model's",
    min: 0,
  },
  {
    key: 'compute',
    path: 'precision.compute',
    kind: 'choice',
    label: 'Compute precision',
    get choices() {
      return schemaList('precision', 'compute').map((t) => (t === 'fp4' ? ['fp4', 'fp4 (NVFP4)'] : t));
    },
  },
  {
    key: 'bf16_last_layers',
    path: 'precision.bf16_last_layers',
    kind: 'int',
    label: 'Last layers kept in bf16',
    optional: true,
    placeholder: 'none',
    min: 0,
  },
  {
    key: 'optimizer',
    path: 'optimizer',
    kind: 'choice',
    label: 'Optimizer',
    choices: [
      ['adamw', 'AdamW (fp32 master + 2 moments)'],
      ['adam_8bit', '8-bit Adam'],
      ['sgd', 'SGD with momentum'],
    ],
  },
  {
    key: 'cost',
    path: 'cost_per_gpu_hour_usd',
    kind: 'num',
    label: '$ per GPU-hour',
    optional: true,
    placeholder: 'list price',
  },
];

export const DEFAULT_TRAINING = Object.freeze({
  task: 'training',
  model: 'llama-3.1-8b',
  hardware: 'h100-sxm',
  num_gpus: 8,
  parallelism: {
    tp: 1,
    pp: 1,
    cp: 1,
    ep: 1,
    vpp: 1,
    sp: false,
    tp_comm_overlap: false,
    ep_comm_overlap: false,
    fsdp: 'full_shard',
  },
  workload: { seq_len: 4096, global_batch_size: 256, total_tokens: 1e10, recompute: 'none' },
  precision: { compute: 'bf16' },
  optimizer: 'adamw',
});

const MEMORY = [
  ['weights_GB', 'Weights', 'mem-weights'],
  ['gradients_GB', 'Gradients', 'mem-grad'],
  ['optimizer_GB', 'Optimizer states', 'mem-opt'],
  ['activations_GB', 'Activations', 'mem-act'],
  ['temporary_GB', 'Temporary buffers', 'mem-temp'],
  ['reserve_GB', 'Reserved', 'mem-reserve'],
];
const PHASES = ['forward', 'backward', 'recompute', 'communication', 'pipeline', 'optimizer', 'overhead'];
const METRICS = [
  ['step', 'Step time', 'step_time_s'],
  ['tps', 'Tokens/s', 'tokens_per_s'],
  ['tpsg', 'Tokens/s per GPU', 'tokens_per_s_per_gpu'],
  ['mfu', 'MFU', 'mfu'],
  ['hfu', 'HFU', 'hfu'],
  ['total', 'Total time', 'total_time_s'],
  ['gpuh', 'GPU-hours', 'gpu_hours'],
];

export class TrainingView {
  constructor(root, { M, presets }) {
    Object.assign(this, { root, M, presets, request: null, result: null, linkErrors: new Map(), general: [] });
    this.form = new Form({ prefix: P, M, presets, fields: FIELDS });
    const ms = (v) => fmtMs(v * 1e3).join(' ');
    this.pin = new Pin(P, [
      ['step', (r) => r.step_time_s, true, ms],
      ['tps', (r) => r.tokens_per_s, false, fmtNum],
      ['tpsg', (r) => r.tokens_per_s_per_gpu, false, fmtNum],
      ['mfu', (r) => r.mfu, false, fmtPct],
      ['hfu', (r) => r.hfu, false, fmtPct],
      ['total', (r) => r.total_time_s, true, ms],
      ['gpuh', (r) => r.gpu_hours, true, fmtNum],
    ]);
    this.build();
    this.reset();
  }

  build() {
    const f = (k) => this.form.render(k);
    const row = (cls, ...kids) => el('div', { class: `row ${cls}` }, ...kids);
    const form = el(
      'form',
      { class: 'panel setup', id: `${P}-form`, autocomplete: 'off', novalidate: true },
      el('h2', { text: 'Training setup' }),
      el(
        'fieldset',
        null,
        el('legend', { text: 'Model and cluster' }),
        f('model'),
        f('hardware'),
        row('', f('num_gpus'), f('gpus_per_node')),
      ),
      el(
        'fieldset',
        null,
        el('legend', { text: 'Parallelism' }),
        row('three', f('tp'), f('pp'), f('dp')),
        row('three', f('cp'), f('ep'), f('vpp')),
        row('', f('first_stage_layers'), f('last_stage_layers')),
        f('sp'),
        f('tp_comm_overlap'),
        f('ep_comm_overlap'),
        f('sharding'),
      ),
      el(
        'fieldset',
        null,
        el('legend', { text: 'Workload' }),
        row('', f('seq_len'), f('global_batch_size')),
        row('', f('micro_batch_size'), f('total_tokens')),
        row('', f('recompute'), f('mtp_layers')),
      ),
      el(
        'fieldset',
        null,
        el('legend', { text: 'Precision and optimizer' }),
        row('', f('compute'), f('bf16_last_layers')),
        row('', f('optimizer'), f('cost')),
        el('p', { class: 'hint', id: `${P}-extras` }),
      ),
    );
    wireForm(form, this, () => this.recompute());
    // TP × PP × CP × DP GPUs: a larger layout raises the GPU count; PP back to 1, one virtual stage.
    this.form.keepCount('num_gpus', ['tp', 'pp', 'cp', 'dp'], 'dp');
    this.form.resetWith('vpp', 'pp', 1, 1);

    const metrics = el(
      'div',
      { class: 'headline wide', id: `${P}-headline` },
      ...METRICS.map(([id, label, key]) => metric(P, id, label, { sub: '', field: key })),
    );
    const results = el(
      'section',
      { class: 'results', id: `${P}-results` },
      el(
        'div',
        { class: 'results-head' },
        el('h2', { text: 'Training estimate' }),
        el('p', { class: 'subtitle', id: `${P}-subtitle` }),
        this.pin.button,
      ),
      this.pin.note,
      ...banners(P),
      el('div', { class: 'unfit-verdict', id: `${P}-unfit`, role: 'status', hidden: true }),
      metrics,
      bandNote(),
      el(
        'div',
        { class: 'panel' },
        el('div', { class: 'panel-head' }, el('h3', { text: 'Where a step goes' }), bandLegend()),
        el('div', { id: `${P}-phases`, class: 'phase-bar' }),
        el('div', { id: `${P}-chart`, class: 'chart' }),
        el('div', { class: 'table-wrap' }, el('table', { id: `${P}-table`, class: 'breakdown' })),
      ),
      el(
        'div',
        { class: 'panel' },
        el(
          'div',
          { class: 'panel-head' },
          el('h3', null, 'Memory ', el('span', { class: 'muted', text: '(per GPU)' })),
          el('span', { class: 'badge', id: `${P}-fits`, text: '—' }),
        ),
        el('div', { id: `${P}-memory-bar`, class: 'memory-bar', role: 'img' }),
        el('ul', { id: `${P}-memory-legend`, class: 'memory-legend' }),
        el('dl', { class: 'facts', id: `${P}-facts` }),
      ),
      searchPanel(
        P,
        'Fastest layouts',
        'Search layouts',
        'Prices every tensor, pipeline, context and expert parallel size, ZeRO stage and recomputation these GPUs allow for this model and workload, each with its fastest micro-batch that fits.',
        el(
          'label',
          { class: 'check' },
          el('input', { type: 'checkbox', id: `${P}-search-compute` }),
          ' Also try the compute types this GPU has (fp8; mxfp8 and fp4 on Blackwell)',
        ),
        el('p', {
          class: 'hint',
          text: 'Sizes to try (comma-separated; empty: every size these GPUs allow). A large MoE model on many GPUs has more layouts than one search prices: pin some here.',
        }),
        el(
          'div',
          { class: 'row pins' },
          ...PINS.map(([label, key]) =>
            field(
              `${P}-search-${key}`,
              label,
              el('input', {
                type: 'text',
                inputmode: 'numeric',
                placeholder: 'all',
                spellcheck: 'false',
                autocomplete: 'off',
              }),
            ),
          ),
        ),
      ),
      warningsPanel(P),
      el(
        'details',
        { class: 'panel' },
        el('summary', null, el('h3', { text: 'Assumptions' })),
        el('div', { class: 'table-wrap' }, el('table', { id: `${P}-assumptions`, class: 'assumptions' })),
      ),
    );
    this.root.replaceChildren(form, results);
    $(`${P}-search-run`).addEventListener('click', () => this.search());
    for (const [, key] of PINS) {
      $(`${P}-search-${key}`).addEventListener('input', () => {
        showFieldError(`${P}-search-${key}`, '');
        if (this.searchKey) showSearchStaleness(P, this.searchKey, this.searchRequest(), this.searchNote);
      });
    }
    this.pin.attach(this, () => $(`${P}-subtitle`).textContent);
  }

  /**
   * The search request of a built setup (the form's, by default): its layout, recomputation and
   * micro-batch left out; null while a field is invalid.
   */
  searchRequest({ request, inputErrors } = this.form.build({ task: 'training' }), loud = false) {
    if (inputErrors.size > 0) return null;
    const pins = this.searchPins(loud);
    if (pins === null) return null;
    const q = clone(request);
    delete q.parallelism;
    delete q.workload.recompute;
    delete q.workload.micro_batch_size;
    const search = { target: 'training', top: 10, ...pins };
    if ($(`${P}-search-compute`)?.checked) {
      // The types the GPU's tensor cores run (its peaks, as the core reads the hardware): the
      // search then sets precision.compute itself.
      const hw = call(this.M, 'hardware_object', JSON.stringify(q.hardware));
      const peaks = (hw.ok && hw.result.dense_peak_TFLOPS) || {};
      search.compute = [peaks.bf16 ? 'bf16' : 'fp16'];
      if (peaks.fp8) search.compute.push('fp8');
      if (peaks.fp4) search.compute.push('mxfp8', 'fp4');
      if (q.precision) delete q.precision.compute;
    }
    return { ...q, task: 'search', search };
  }

  /** Task "search": the fastest layouts, found in the search worker, each with a button that
   * loads it into the form. */
  search() {
    const q = this.searchRequest(undefined, true);
    runSearch(
      P,
      q,
      (res, seconds) => this.showSearch(q, res, seconds),
      // A size the module refused ("search.ep[0]: must divide ...") shows beside its box; a space
      // too large to search points at the boxes.
      (error) => {
        const pin = PINS.find(([, key]) => error.path?.startsWith(`search.${key}`));
        if (pin) showFieldError(`${P}-search-${pin[1]}`, error.message);
        else if (error.path === 'search' && /more than/.test(error.message)) {
          $(`${P}-search-note`).textContent =
            `This search would price more than 20,000 layouts: pin TP, PP, CP or EP to a few sizes in the boxes below and search again. (${error.message})`;
        }
      },
    );
  }

  /** The sizes boxes as search.tp, .pp, .cp and .ep lists (only those filled), or null when an
   * entry is not a whole number >= 1 (`loud`: the reason shows beside its box). */
  searchPins(loud) {
    const pins = {};
    let ok = true;
    for (const [, key] of PINS) {
      const id = `${P}-search-${key}`;
      const entries = ($(id)?.value ?? '')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
      const bad = entries.find((x) => !/^[0-9]+$/.test(x) || Number(x) < 1);
      if (loud)
        showFieldError(
          id,
          bad === undefined ? '' : `"${bad}": expected whole numbers >= 1, comma-separated, e.g. 1, 2, 4`,
        );
      if (bad !== undefined) ok = false;
      else if (entries.length) pins[key] = entries.map(Number);
    }
    return ok ? pins : null;
  }

  showSearch(q, res, seconds) {
    const note = $(`${P}-search-note`);
    const table = $(`${P}-search-table`);
    this.searchKey = JSON.stringify(q);
    const rejected = res.rejected.map((x) => `${fmtInt(x.count)} ${x.reason}`).join('; ');
    this.searchNote =
      `${fmtInt(res.evaluated)} layouts considered, ${fmtInt(res.fitting)} fit ` +
      `(${fmtInt(res.micro_batches_priced)} micro-batch sizes priced).` +
      (res.candidates.length ? '' : ' None fits in memory: add GPUs or shorten the sequence.') +
      (rejected ? ` Rejected: ${rejected}.` : '') +
      ` Searched in ${seconds.toFixed(1)} s.`;
    note.textContent = this.searchNote;
    // The compute type is a column only when the search tried several.
    const types = Boolean(q.search.compute);
    const head = [
      '#',
      'TP',
      'PP',
      'VPP',
      'DP',
      'CP',
      'EP',
      'ZeRO',
      'Recompute',
      ...(types ? ['Compute'] : []),
      'Micro-batch',
      'Step time',
      'Tok/s per GPU',
      'MFU',
      'Memory GB',
      '',
    ];
    fillCandidates(
      table,
      head,
      head.indexOf('Micro-batch'),
      res.candidates,
      (c) => {
        const p = c.parallelism;
        return [
          ...[p.tp, p.pp, p.vpp, p.dp, p.cp, p.ep, p.zero].map((v) => el('td', { text: String(v) })),
          el('td', { text: c.recompute }),
          ...(types ? [el('td', { text: c.compute })] : []),
          el('td', { class: 'num', text: String(c.micro_batch_size) }),
          el('td', { class: 'num', 'data-value': String(c.step_time_s), text: fmtMs(c.step_time_s * 1e3).join(' ') }),
          el('td', { class: 'num', text: fmtNum(c.tokens_per_s_per_gpu) }),
          el('td', { class: 'num', text: fmtPct(c.mfu) }),
          el('td', {
            class: 'num',
            text: `${fmtGB(c.memory_GB).replace(' GB', '')} / ${fmtGB(c.capacity_GB).replace(' GB', '')}`,
          }),
        ];
      },
      (r) => this.applyRequest(r),
      this.M,
    );
  }

  reset() {
    this.form.reset(DEFAULT_TRAINING);
  }

  /** Applies a link's request (decoded by views.js); problems show beside their fields. */
  applyRequest(request) {
    this.reset();
    this.form.clearOptional();
    ({ linkErrors: this.linkErrors, general: this.general } = this.form.applyLink(request, true));
    this.recompute();
  }

  recompute() {
    const built = this.form.build({ task: 'training' });
    const { request, inputErrors } = built;
    this.request = request;
    const errors = new Map([...this.linkErrors, ...inputErrors]);
    const general = [...this.general];
    const result = inputErrors.size === 0 ? this.form.estimate(request, errors, general, true) : null;
    const stale = !result || this.linkErrors.size > 0;
    if (!stale) {
      this.result = result;
      this.render(result);
    }
    this.form.showErrors(errors, general);
    markStale(this, P, stale);
    if (this.searchKey) showSearchStaleness(P, this.searchKey, this.searchRequest(built), this.searchNote);
    $(`${P}-stale`).textContent = this.result
      ? 'Results are out of date — fix the highlighted fields to recompute.'
      : 'No results yet — fix the highlighted fields to compute.';
  }

  render(res) {
    this.root.dataset.renders = String(Number(this.root.dataset.renders || 0) + 1);
    const q = res.request || {};
    const pl = q.parallelism || {};
    const shard = pl.fsdp ? `FSDP ${pl.fsdp.replace(/_/g, ' ')}` : pl.zero ? `ZeRO-${pl.zero}` : 'no sharding';
    $(`${P}-subtitle`).textContent =
      `${res.model?.name} on ${res.num_gpus} × ${res.hardware?.name} · TP ${pl.tp} · PP ${pl.pp}` +
      `${pl.vpp > 1 ? `×${pl.vpp}` : ''} · DP ${pl.dp}${pl.cp > 1 ? ` · CP ${pl.cp}` : ''}${pl.ep > 1 ? ` · EP ${pl.ep}` : ''} · ${shard} · tier ${res.tier}`;
    const set = (id, value, textUnit, sub = '') => setMetric(P, id, value, textUnit, sub);
    // The 80% band measured on sources flopcast never fitted (docs/validation.md), when given.
    const iv = res.interval || {};
    set(
      'step',
      res.step_time_s,
      fmtMs(res.step_time_s * 1e3),
      `${fmtInt(res.tokens_per_step)} tokens, ${res.num_micro_batches} micro-batches`,
    );
    set('tps', res.tokens_per_s, [fmtNum(res.tokens_per_s), 'tok/s'], `${fmtInt(res.num_gpus)} GPUs`);
    set(
      'tpsg',
      res.tokens_per_s_per_gpu,
      [fmtNum(res.tokens_per_s_per_gpu), 'tok/s'],
      `${fmtNum(res.model_tflops_per_gpu)} model TFLOP/s per GPU${bandText(iv.tokens_per_s_per_gpu, fmtNum)}`,
    );
    set(
      'mfu',
      res.mfu,
      [fmtPct(res.mfu), ''],
      `of ${fmtNum(res.peak_tflops_per_gpu)} TFLOP/s peak${bandText(iv.mfu, fmtPct)}`,
    );
    set('hfu', res.hfu, [fmtPct(res.hfu), ''], 'counts recomputed FLOPs');
    const hasTotal = typeof res.total_time_s === 'number';
    set(
      'total',
      res.total_time_s,
      hasTotal ? fmtMs(res.total_time_s * 1e3) : ['—', ''],
      hasTotal ? `for ${fmtNum(q.workload?.total_tokens)} tokens` : 'give total tokens',
    );
    set(
      'gpuh',
      res.gpu_hours,
      hasTotal ? [fmtNum(res.gpu_hours), 'GPU·h'] : ['—', ''],
      [
        typeof res.cost_usd === 'number'
          ? `$${fmtInt(res.cost_usd)} at $${fmtNum(res.cost_basis?.usd_per_gpu_hour)}/GPU·h`
          : '',
        typeof res.energy?.total_MWh === 'number' ? `${fmtNum(res.energy.total_MWh)} MWh` : '',
      ]
        .filter(Boolean)
        .join(' · '),
    );
    this.pin.render(res);
    this.renderBreakdown(res.breakdown || [], res.step_time_s * 1e3);
    this.renderMemory(res.memory_per_gpu || {}, res);
    // A step that does not fit in memory has no step time: its headline numbers would describe
    // memory the GPUs do not have, so the verdict and what would make it fit replace them.
    const mem = res.memory_per_gpu || {};
    showVerdict(
      `${P}-unfit`,
      mem.fits === false
        ? `Does not fit: a GPU needs ${fmtGB(mem.total_GB)} of its ${fmtGB(mem.capacity_GB)}, so no step time is shown. ` +
            (res.max_micro_batch_size > 0
              ? `A micro-batch of ${fmtInt(res.max_micro_batch_size)} fits. `
              : 'Not even a micro-batch of 1 fits. ') +
            'To fit: shard weights, gradients and optimizer states (FSDP full_shard or ZeRO-3), recompute activations, ' +
            'raise tensor or pipeline parallelism, or use more GPUs.'
        : null,
      `${P}-headline`,
    );
    showWarnings(P, res.warnings);
    $(`${P}-assumptions`).replaceChildren(
      el(
        'tbody',
        null,
        ...(res.assumptions || []).map((a) =>
          el(
            'tr',
            null,
            el('th', { scope: 'row', text: String(a.name).replace(/_/g, ' ') }),
            el('td', { class: 'num', text: `${a.value}${a.unit ? ` ${a.unit}` : ''}` }),
            el('td', { class: 'source', text: a.source || '' }),
          ),
        ),
      ),
    );
  }

  renderBreakdown(rows, stepMs) {
    // One stacked bar of the phases, then one bar per (phase, op).
    const byPhase = new Map();
    for (const r of rows) byPhase.set(r.phase, (byPhase.get(r.phase) || 0) + r.time_ms);
    const phases = [...byPhase.keys()].sort((a, b) => PHASES.indexOf(a) - PHASES.indexOf(b));
    const total = [...byPhase.values()].reduce((a, b) => a + b, 0) || 1;
    $(`${P}-phases`).replaceChildren(
      ...phases.map((ph) => {
        const seg = el(
          'div',
          { class: `phase-seg ph-${ph}`, 'data-phase': ph, title: `${ph}: ${fmtMs(byPhase.get(ph)).join(' ')}` },
          el('span', { text: `${ph} ${fmtPct(byPhase.get(ph) / total)}` }),
        );
        seg.style.width = `${(100 * byPhase.get(ph)) / total}%`;
        return seg;
      }),
    );
    const sorted = [...rows].sort((a, b) => b.time_ms - a.time_ms);
    const W = 760,
      rowH = 20,
      labelW = 210,
      valueW = 80,
      barW = W - labelW - valueW;
    const max = Math.max(...sorted.map((r) => r.time_ms), 1e-12);
    const chart = svg('svg', {
      viewBox: `0 0 ${W} ${sorted.length * rowH + 4}`,
      width: '100%',
      role: 'img',
      class: 'bar-chart',
      'aria-label': 'step time by operation',
    });
    sorted.forEach((r, i) => {
      const y = i * rowH + 2;
      const label = `${r.phase} · ${r.op.replace(/_/g, ' ')}`;
      const g = svg('g', { class: 'bar-row' });
      g.append(svg('title', {}, `${label}: ${fmtMs(r.time_ms).join(' ')} (${fmtPct(r.share)}), ${r.bound}`));
      g.append(
        svg(
          'text',
          { x: labelW - 8, y: y + rowH / 2, class: 'bar-label', 'text-anchor': 'end', 'dominant-baseline': 'central' },
          label,
        ),
      );
      g.append(svg('rect', { x: labelW, y: y + 4, width: barW, height: rowH - 8, rx: 3, class: 'bar-track' }));
      g.append(
        svg('rect', {
          x: labelW,
          y: y + 4,
          width: Math.max(1, (r.time_ms / max) * barW).toFixed(1),
          height: rowH - 8,
          rx: 3,
          class: `bar bound-${r.bound}`,
        }),
      );
      g.append(
        svg(
          'text',
          { x: labelW + barW + 6, y: y + rowH / 2, class: 'bar-value', 'dominant-baseline': 'central' },
          fmtMs(r.time_ms).join(' '),
        ),
      );
      chart.append(g);
    });
    $(`${P}-chart`).replaceChildren(chart);
    $(`${P}-table`).replaceChildren(
      el(
        'thead',
        null,
        el(
          'tr',
          null,
          ...['Phase', 'Operation', 'Time', 'Share', 'Bound', 'FLOPs'].map((h, i) =>
            el('th', { scope: 'col', class: i >= 2 && i !== 4 ? 'num' : null, text: h }),
          ),
        ),
      ),
      el(
        'tbody',
        null,
        ...sorted.map((r) =>
          el(
            'tr',
            { 'data-op': `${r.phase}.${r.op}` },
            el('td', { text: r.phase }),
            el('th', { scope: 'row', text: r.op.replace(/_/g, ' ') }),
            el('td', { class: 'num', text: fmtMs(r.time_ms).join(' ') }),
            el('td', { class: 'num', text: fmtPct(r.share) }),
            el('td', null, el('span', { class: `bound-tag bound-${r.bound}`, text: r.bound })),
            el('td', { class: 'num', text: r.flops ? r.flops.toPrecision(3) : '—' }),
          ),
        ),
      ),
      el(
        'tfoot',
        null,
        el(
          'tr',
          null,
          el('th', { scope: 'row', colspan: 2, text: 'Step time' }),
          el('td', { class: 'num', text: fmtMs(stepMs).join(' ') }),
          el('td'),
          el('td'),
          el('td'),
        ),
      ),
    );
  }

  renderMemory(mem, res) {
    const cap = Number(mem.capacity_GB) || 0;
    const used = Number(mem.total_GB) || 0;
    const whole = Math.max(cap, used, 1e-9);
    const segs = MEMORY.filter(([k]) => mem[k] > 0).map(([k, label, cls]) => {
      const s = el('div', { class: `mem-seg ${cls}`, title: `${label}: ${fmtGB(mem[k])}` });
      s.style.width = `${(100 * mem[k]) / whole}%`;
      return s;
    });
    if (cap > used) {
      const s = el('div', { class: 'mem-seg mem-free', title: `Free: ${fmtGB(cap - used)}` });
      s.style.width = `${(100 * (cap - used)) / whole}%`;
      segs.push(s);
    } else if (cap > 0) {
      const mark = el('div', { class: 'mem-capacity', title: `Capacity: ${fmtGB(cap)}` });
      mark.style.left = `${(100 * cap) / whole}%`;
      segs.push(mark);
    }
    const bar = $(`${P}-memory-bar`);
    bar.replaceChildren(...segs);
    bar.classList.toggle('overflow', !mem.fits);
    bar.setAttribute('aria-label', `Memory per GPU: ${fmtGB(used)} of ${fmtGB(cap)}`);
    $(`${P}-memory-legend`).replaceChildren(
      ...MEMORY.map(([k, label, cls]) =>
        el(
          'li',
          { 'data-part': k },
          el('span', { class: `swatch ${cls}` }),
          el('span', { class: 'legend-label', text: label }),
          el('span', { class: 'legend-value', text: fmtGB(mem[k]) }),
        ),
      ),
      el(
        'li',
        { class: 'legend-total', 'data-part': 'total_GB' },
        el('span', { class: 'legend-label', text: 'Total' }),
        el('span', { class: 'legend-value', text: `${fmtGB(used)} of ${fmtGB(cap)}` }),
      ),
    );
    const badge = $(`${P}-fits`);
    badge.className = `badge ${mem.fits ? 'ok' : 'bad'}`;
    badge.textContent = mem.fits ? 'Fits' : `Does not fit — short by ${fmtGB(used - cap)}`;
    badge.dataset.fits = String(Boolean(mem.fits));
    const facts = [
      ['Micro-batch', 'micro_batch_size', `${res.micro_batch_size}${res.micro_batch_searched ? ' (searched)' : ''}`],
      [
        'Largest micro-batch that fits',
        'max_micro_batch_size',
        res.max_micro_batch_size > 0 ? fmtInt(res.max_micro_batch_size) : 'none',
      ],
      ['Pipeline bubble', 'bubble_fraction', fmtPct(res.bubble_fraction)],
      [
        'Parameters',
        'params_B',
        `${fmtNum(res.model?.params_B)} B (${fmtNum(res.model?.trainable_params_B)} B trained)`,
      ],
    ];
    $(`${P}-facts`).replaceChildren(
      ...facts.map(([dt, key, dd]) =>
        el('div', null, el('dt', { text: dt }), el('dd', { 'data-field': key, text: dd })),
      ),
    );
  }
}

function bandLegend() {
  return el(
    'ul',
    { class: 'bound-legend' },
    ...['compute', 'memory', 'communication', 'overhead'].map((b) =>
      el('li', null, el('span', { class: `swatch bound-${b}` }), b),
    ),
  );
}
