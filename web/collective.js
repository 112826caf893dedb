// Collective view (task "collective"): time and bus bandwidth of one NCCL-style collective, and
// the same collective swept over message sizes from 256 B to 4 GiB.

import {
  $,
  el,
  banners,
  call,
  clone,
  fmtBytes,
  fmtMs,
  fmtNum,
  lineChart,
  markStale,
  metric,
  setMetric,
  wireForm,
  Pin,
} from './ui.js';
import { Form } from './form.js';

const P = 'co';

const FIELDS = [
  { key: 'hardware', path: 'hardware', kind: 'spec', label: 'GPU' },
  {
    key: 'op',
    path: 'collective.op',
    kind: 'choice',
    label: 'Operation',
    choices: ['all_reduce', 'all_gather', 'reduce_scatter', 'all_to_all', 'broadcast', 'send_recv'],
  },
  {
    key: 'bytes',
    path: 'collective.bytes',
    kind: 'size',
    label: 'Message size (bytes, or 64MiB, 1GB)',
    hint: 'Units as the CLI reads them: KB, MB, GB (1000ⁿ), KiB, MiB, GiB (1024ⁿ)',
  },
  { key: 'ranks', path: 'collective.ranks', kind: 'int', label: 'Ranks (GPUs)', min: 1 },
  {
    key: 'algorithm',
    path: 'collective.algorithm',
    kind: 'choice',
    label: 'Algorithm',
    choices: ['automatic', 'ring', 'tree', 'hierarchical'],
  },
  {
    key: 'gpus_per_node',
    path: 'gpus_per_node',
    kind: 'int',
    label: 'GPUs per node',
    optional: true,
    placeholder: 'GPU default',
    min: 1,
  },
];

export const DEFAULT_COLLECTIVE = Object.freeze({
  task: 'collective',
  hardware: 'h100-sxm',
  collective: { op: 'all_reduce', bytes: 67108864, ranks: 8, algorithm: 'automatic' },
});

const SIZES_LOG2 = Array.from({ length: 25 }, (_, i) => 8 + i); // 256 B … 4 GiB

export class CollectiveView {
  constructor(root, { M, presets }) {
    Object.assign(this, { root, M, presets, request: null, result: null, linkErrors: new Map(), general: [] });
    this.form = new Form({ prefix: P, M, presets, fields: FIELDS });
    this.pin = new Pin(P, [
      ['time', (r) => r.time_us, true, (v) => fmtMs(v / 1e3).join(' ')],
      ['busbw', (r) => r.bus_bandwidth_GBps, false, (v) => `${fmtNum(v)} GB/s`],
      ['algbw', (r) => r.algorithm_bandwidth_GBps, false, (v) => `${fmtNum(v)} GB/s`],
    ]);
    const f = (k) => this.form.render(k);
    const form = el(
      'form',
      { class: 'panel setup', autocomplete: 'off', novalidate: true },
      el('h2', { text: 'Collective' }),
      el('fieldset', null, el('legend', { text: 'Cluster' }), f('hardware'), f('gpus_per_node')),
      el(
        'fieldset',
        null,
        el('legend', { text: 'Collective' }),
        f('op'),
        f('bytes'),
        el('div', { class: 'row' }, f('ranks'), f('algorithm')),
        el('p', { class: 'hint', id: `${P}-extras` }),
      ),
    );
    wireForm(form, this, () => this.recompute());
    const m = (id, label) => metric(P, id, label);
    root.replaceChildren(
      form,
      el(
        'section',
        { class: 'results' },
        el(
          'div',
          { class: 'results-head' },
          el('h2', { text: 'Collective time' }),
          el('p', { class: 'subtitle', id: `${P}-subtitle` }),
          this.pin.button,
        ),
        this.pin.note,
        ...banners(P, 'Fix the highlighted fields to recompute.'),
        el(
          'div',
          { class: 'headline wide' },
          m('time', 'Time'),
          m('busbw', 'Bus bandwidth'),
          m('algbw', 'Algorithm bandwidth'),
        ),
        el(
          'div',
          { class: 'panel' },
          el('h3', { text: 'Against message size' }),
          el('div', { class: 'charts', id: `${P}-charts` }),
        ),
      ),
    );
    this.pin.attach(this, () => this.label());
    this.form.apply(clone(DEFAULT_COLLECTIVE));
  }

  /** The pinned setup's label: operation, size, ranks and GPU. */
  label() {
    const c = this.request?.collective ?? {};
    return `${c.op} of ${fmtBytes(c.bytes)} over ${c.ranks} ranks, ${$(`${P}-subtitle`).textContent}`;
  }

  applyRequest(request) {
    this.form.clearOptional();
    this.form.apply(clone(DEFAULT_COLLECTIVE));
    ({ linkErrors: this.linkErrors, general: this.general } = this.form.applyLink(request));
    this.recompute();
  }

  recompute() {
    const { request, inputErrors } = this.form.build({ task: 'collective' });
    this.request = request;
    const errors = new Map([...this.linkErrors, ...inputErrors]);
    const general = [...this.general];
    const res = inputErrors.size === 0 ? this.form.estimate(request, errors, general) : null;
    const stale = !res || this.linkErrors.size > 0;
    this.form.showErrors(errors, general);
    markStale(this, P, stale);
    if (stale) return;
    this.result = res;
    const set = (id, v, textUnit) => setMetric(P, id, v, textUnit);
    set('time', res.time_us, fmtMs(res.time_us / 1e3));
    set('busbw', res.bus_bandwidth_GBps, [fmtNum(res.bus_bandwidth_GBps), 'GB/s']);
    set('algbw', res.algorithm_bandwidth_GBps, [fmtNum(res.algorithm_bandwidth_GBps), 'GB/s']);
    $(`${P}-subtitle`).textContent =
      `${res.algorithm} over ${res.nodes} ${res.nodes === 1 ? 'node' : 'nodes'} × ${res.ranks_per_node} ranks · tier ${res.tier}`;
    this.pin.render(res);
    this.renderSweep(request);
  }

  renderSweep(request) {
    const pts = [];
    for (const k of SIZES_LOG2) {
      const q = clone(request);
      q.collective.bytes = 2 ** k;
      const r = call(this.M, 'estimate', JSON.stringify(q));
      if (r.ok) pts.push([k, r.result]);
    }
    const here = Math.log2(request.collective.bytes);
    const common = {
      xLabel: 'message size',
      xMin: 8,
      xTop: 32,
      xFmt: (v) => fmtBytes(2 ** v),
      markers: [{ x: here, label: 'this size', cls: 'current' }],
    };
    $(`${P}-charts`).replaceChildren(
      lineChart({
        ...common,
        title: 'Bus bandwidth (GB/s)',
        yLabel: 'GB/s',
        series: [{ label: 'bus bandwidth', cls: 's2', points: pts.map(([k, r]) => [k, r.bus_bandwidth_GBps]) }],
      }),
      lineChart({
        ...common,
        title: 'Time (log scale)',
        yLabel: 'time',
        yFmt: (v) => fmtMs(10 ** v / 1e3).join(' '),
        series: [{ label: 'time', cls: 's1', points: pts.map(([k, r]) => [k, Math.log10(r.time_us)]) }],
      }),
    );
  }
}
