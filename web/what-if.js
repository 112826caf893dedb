// What-if hardware: a preset with some of its figures scaled, `{"preset": id, "scale": {...}}`
// (docs/schema.md, "What-if hardware"). One component under every GPU picker: the inference
// form and the Form views (serving, training). The core checks the factors and names the field.

import { SCHEMA, el, field, numberInput, schemaList } from './ui.js';

// How the page labels the figures the module's schema() lists as `hardware.scale` (a key without
// a label here shows by its name): [label, what it scales].
const LABELS = {
  compute: ['× compute', 'every dense peak'],
  hbm_bandwidth: ['× mem. BW', 'memory bandwidth'],
  hbm_capacity: ['× memory', 'memory capacity'],
  scaleup_bandwidth: ['× scale-up', 'scale-up (NVLink) bandwidth per GPU'],
  scaleout_bandwidth: ['× scale-out', 'scale-out bandwidth per NIC'],
};

export class WhatIf {
  /** `selectId`: the id of the GPU select the factors apply to. */
  constructor(selectId) {
    this.selectId = selectId;
    this.inputs = new Map();
    const [min, max] = SCHEMA.limits?.what_if_scale ?? [];
    const fields = schemaList('hardware', 'scale').map((key) => {
      const [label, what] = LABELS[key] ?? [`× ${key}`, key];
      const input = numberInput({
        min,
        max,
        step: 'any',
        placeholder: '1',
        title: `Multiplies the ${what}`,
      });
      this.inputs.set(key, input);
      return field(this.id(key), label, input);
    });
    this.element = el(
      'details',
      { class: 'what-if', id: `${selectId}-whatif` },
      el('summary', { text: 'What if… (scale this GPU)' }),
      el(
        'p',
        { class: 'hint' },
        'Multiply the preset’s figures (compute peaks, memory bandwidth and capacity, scale-up and ' +
          'scale-out bandwidth), e.g. 2 × memory bandwidth. Its measured kernel fits still apply: the ' +
          'part is assumed to reach the same share of its scaled peaks.',
      ),
      el('div', { class: 'row three' }, ...fields),
    );
  }

  id(key) {
    return `${this.selectId}-whatif-${key}`;
  }

  ids() {
    return [...this.inputs.keys()].map((key) => this.id(key));
  }

  /** {scale, errors}: the factors set (empty inputs and 1 leave a figure as it is). */
  read() {
    const scale = {};
    const errors = new Map();
    for (const [key, input] of this.inputs) {
      const raw = input.value.trim();
      if (raw === '') continue;
      const x = Number(raw);
      if (!Number.isFinite(x)) errors.set(this.id(key), 'Enter a number.');
      else if (x !== 1) scale[key] = x;
    }
    return { scale, errors };
  }

  /** The request's hardware for preset `id`: the id itself, or the what-if object. */
  hardware(id, scale) {
    return Object.keys(scale).length ? { preset: id, scale } : id;
  }

  /** Shows a request's factors (none: every input empty, the details closed). */
  set(scale) {
    const s = scale && typeof scale === 'object' ? scale : {};
    for (const [key, input] of this.inputs) input.value = key in s ? String(s[key]) : '';
    this.element.open = Object.keys(s).length > 0;
  }

  /** The input of an error's path (`hardware.scale.hbm_bandwidth`), or null. */
  target(path) {
    const m = /^hardware\.scale\.(\w+)$/.exec(String(path || ''));
    if (!m) return null;
    return this.inputs.has(m[1]) ? this.id(m[1]) : null;
  }

  /** A hardware value these inputs can show: `{preset, scale}` with known factors only (any
   *  other object goes to the custom box, where the core names what is wrong with it). */
  static is(value) {
    const known = new Set(schemaList('hardware', 'scale'));
    const scale = value?.scale ?? {};
    return (
      value !== null &&
      typeof value === 'object' &&
      typeof value.preset === 'string' &&
      Object.keys(value).every((k) => k === 'preset' || k === 'scale') &&
      scale !== null &&
      typeof scale === 'object' &&
      !Array.isArray(scale) &&
      Object.entries(scale).every(([k, v]) => known.has(k) && typeof v === 'number')
    );
  }

  /** Hides itself where no preset is chosen (a custom GPU states its figures itself). */
  show(visible) {
    this.element.hidden = !visible;
  }
}
