// Collective view (task "collective"): time and bus bandwidth of one NCCL-style collective, and
// the same collective swept over message sizes from 256 B to 4 GiB.

import { $, el, call, clone, fmtBytes, fmtMs, fmtNum, lineChart } from './ui.js';
import { Form } from './form.js';

const P = 'co';

const FIELDS = [
  { key: 'hardware', path: 'hardware', kind: 'spec', label: 'GPU' },
  { key: 'op', path: 'collective.op', kind: 'choice', label: 'Operation', choices: ['all_reduce', 'all_gather', 'reduce_scatter', 'all_to_all', 'broadcast', 'send_recv'] },
  { key: 'bytes', path: 'collective.bytes', kind: 'num', label: 'Message size (bytes)', min: 1, hint: '67108864 = 64 MiB' },
  { key: 'ranks', path: 'collective.ranks', kind: 'int', label: 'Ranks (GPUs)', min: 1 },
  { key: 'algorithm', path: 'collective.algorithm', kind: 'choice', label: 'Algorithm', choices: ['automatic', 'ring', 'tree', 'hierarchical'] },
  { key: 'gpus_per_node', path: 'gpus_per_node', kind: 'int', label: 'GPUs per node', optional: true, placeholder: 'GPU default', min: 1 },
];

export const DEFAULT_COLLECTIVE = Object.freeze({
  task: 'collective', hardware: 'h100-sxm', collective: { op: 'all_reduce', bytes: 67108864, ranks: 8, algorithm: 'automatic' },
});

const SIZES_LOG2 = Array.from({ length: 25 }, (_, i) => 8 + i); // 256 B … 4 GiB

export class CollectiveView {
  constructor(root, { M, presets }) {
    Object.assign(this, { root, M, presets, request: null, result: null, linkErrors: new Map(), general: [] });
    this.form = new Form({ prefix: P, M, presets, fields: FIELDS });
    const f = (k) => this.form.render(k);
    const form = el('form', { class: 'panel setup', autocomplete: 'off', novalidate: true }, el('h2', { text: 'Collective' }),
      el('fieldset', null, el('legend', { text: 'Cluster' }), f('hardware'), f('gpus_per_node')),
      el('fieldset', null, el('legend', { text: 'Collective' }), f('op'), f('bytes'), el('div', { class: 'row' }, f('ranks'), f('algorithm')),
        el('p', { class: 'hint', id: `${P}-extras` })));
    form.addEventListener('submit', (e) => e.preventDefault());
    form.addEventListener('input', (e) => {
      const id = e.target.id.replace(/-custom$/, '');
      this.linkErrors.delete(id);
      this.linkErrors.delete(`${id}-custom`);
      this.recompute();
    });
    const metric = (id, label) => el('div', { class: 'metric' }, el('div', { class: 'metric-label', text: label }),
      el('div', { class: 'metric-value' }, el('span', { class: 'num', id: `${P}-${id}`, text: '—' }), ' ', el('span', { class: 'unit', id: `${P}-${id}-unit` })));
    root.replaceChildren(form, el('section', { class: 'results' },
      el('div', { class: 'results-head' }, el('h2', { text: 'Collective time' }), el('p', { class: 'subtitle', id: `${P}-subtitle` })),
      el('div', { class: 'general-error', id: `${P}-general-error`, role: 'alert', hidden: true }),
      el('div', { class: 'stale-banner', id: `${P}-stale`, role: 'status', hidden: true, text: 'Fix the highlighted fields to recompute.' }),
      el('div', { class: 'headline wide' }, metric('time', 'Time'), metric('busbw', 'Bus bandwidth'), metric('algbw', 'Algorithm bandwidth')),
      el('div', { class: 'panel' }, el('h3', { text: 'Against message size' }), el('div', { class: 'charts', id: `${P}-charts` }))));
    this.form.apply(clone(DEFAULT_COLLECTIVE));
  }

  applyRequest(request) {
    this.form.clearOptional();
    this.form.apply(clone(DEFAULT_COLLECTIVE));
    this.linkErrors = new Map();
    this.general = [];
    for (const p of this.form.apply(request)) {
      const t = this.form.target(p.path);
      if (t === 'general') this.general.push(`From the link: ${p.message}`);
      else this.linkErrors.set(t, p.message);
    }
    this.recompute();
  }

  recompute() {
    const { request, inputErrors } = this.form.build({ task: 'collective' });
    this.request = request;
    const errors = new Map([...this.linkErrors, ...inputErrors]);
    const general = [...this.general];
    let res = null;
    if (inputErrors.size === 0) {
      const r = call(this.M, 'estimate', JSON.stringify(request));
      if (r.ok) res = r.result;
      else if (this.form.target(r.error.path) === 'general') general.push(r.error.message);
      else errors.set(this.form.target(r.error.path), r.error.message);
    }
    const stale = !res || this.linkErrors.size > 0;
    this.form.showErrors(errors, general);
    this.root.classList.toggle('stale', stale);
    this.root.dataset.status = stale ? 'stale' : 'ready';
    $(`${P}-stale`).hidden = !stale;
    if (stale) return;
    this.result = res;
    const set = (id, v, [text, unit]) => {
      $(`${P}-${id}`).textContent = text;
      $(`${P}-${id}`).dataset.value = String(v);
      $(`${P}-${id}-unit`).textContent = unit;
    };
    set('time', res.time_us, fmtMs(res.time_us / 1e3));
    set('busbw', res.bus_bandwidth_GBps, [fmtNum(res.bus_bandwidth_GBps), 'GB/s']);
    set('algbw', res.algorithm_bandwidth_GBps, [fmtNum(res.algorithm_bandwidth_GBps), 'GB/s']);
    $(`${P}-subtitle`).textContent = `${res.algorithm} over ${res.nodes} ${res.nodes === 1 ? 'node' : 'nodes'} × ${res.ranks_per_node} ranks · tier ${res.tier}`;
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
    const common = { xLabel: 'message size', xMin: 8, xTop: 32, xFmt: (v) => fmtBytes(2 ** v), markers: [{ x: here, label: 'this size', cls: 'current' }] };
    $(`${P}-charts`).replaceChildren(
      lineChart({ ...common, title: 'Bus bandwidth (GB/s)', yLabel: 'GB/s', series: [{ label: 'bus bandwidth', cls: 's2', points: pts.map(([k, r]) => [k, r.bus_bandwidth_GBps]) }] }),
      lineChart({ ...common, title: 'Time (log scale)', yLabel: 'time', yFmt: (v) => fmtMs(10 ** v / 1e3).join(' '), series: [{ label: 'time', cls: 's1', points: pts.map(([k, r]) => [k, Math.log10(r.time_us)]) }] }));
  }
}
