// Small DOM, formatting and link helpers shared by the page (app.js) and its training, serving and collective views.
// Same rules as app.js: DOM built with createElement/createElementNS/textContent only.

export const SVG_NS = 'http://www.w3.org/2000/svg';
export const CUSTOM = '__custom__';

export const $ = (id) => document.getElementById(id);

export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

export function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A chart's y-axis title, turned to run up the left edge of a plot with margins `m`, height H. */
export function yAxisLabel(m, H, text) {
  const y = (m.t + H - m.b) / 2;
  return svg(
    'text',
    { x: 12, y, class: 'axis-label', 'text-anchor': 'middle', transform: `rotate(-90 12 ${y})` },
    text,
  );
}

export const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
export const clone = (v) => JSON.parse(JSON.stringify(v));

/** Keys that would reach an object's prototype rather than a field of its own. */
/** Downloads and compiles the WebAssembly module once; the page and the simulator's worker each
 *  instantiate it from the compiled module (a WebAssembly.Module crosses postMessage). */
export async function compileModule() {
  const url = new URL('./flopcast.wasm', import.meta.url);
  try {
    return await WebAssembly.compileStreaming(fetch(url));
  } catch {
    return WebAssembly.compile(await (await fetch(url)).arrayBuffer()); // a server without application/wasm
  }
}

/** Emscripten options that instantiate from `compiled` (no fetch, no compile), or none. */
export function moduleOptions(compiled) {
  if (!compiled) return {};
  return {
    instantiateWasm(imports, receive) {
      WebAssembly.instantiate(compiled, imports).then((instance) => receive(instance, compiled));
      return {};
    },
  };
}

const UNSAFE_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

export function setPath(obj, path, value) {
  const keys = path.split('.');
  // A link or a form must never write through to Object.prototype (`__proto__.hint=...`).
  if (keys.some((k) => UNSAFE_KEYS.has(k))) throw new Error(`${path}: not a request field`);
  let cur = obj;
  for (const k of keys.slice(0, -1)) {
    if (!isPlainObject(cur[k])) cur[k] = {};
    cur = cur[k];
  }
  cur[keys[keys.length - 1]] = value;
}

// Dotted paths of a request's leaves; model and hardware objects stay whole.
export function flatten(obj, prefix = '', out = {}) {
  for (const [k, v] of Object.entries(obj || {})) {
    const p = prefix ? `${prefix}.${k}` : k;
    if (isPlainObject(v) && p !== 'model' && p !== 'hardware') flatten(v, p, out);
    else out[p] = v;
  }
  return out;
}

const group = (s) => s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const finite = (v) => typeof v === 'number' && Number.isFinite(v);

export function fmtNum(v) {
  if (!finite(v)) return '—';
  const a = Math.abs(v);
  if (a >= 1000) return (v < 0 ? '-' : '') + group(String(Math.round(a)));
  if (a >= 100) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  if (a >= 0.01) return v.toFixed(3);
  return a === 0 ? '0' : v.toPrecision(2);
}

export const fmtInt = (v) => (finite(v) ? (v < 0 ? '-' : '') + group(String(Math.round(Math.abs(v)))) : '—');
export const fmtPct = (v) => (finite(v) ? `${(v * 100).toFixed(v >= 0.1 ? 1 : 2)}%` : '—');
export const fmtGB = (v) =>
  finite(v) ? `${Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2)} GB` : '—';

/** [text, unit] of a duration given in milliseconds: ms, s, min, h or days. */
export function fmtMs(ms) {
  if (!finite(ms)) return ['—', 'ms'];
  const steps = [
    [86400e3, 'days'],
    [3600e3, 'h'],
    [60e3, 'min'],
    [1e3, 's'],
  ];
  for (const [f, unit] of steps)
    if (Math.abs(ms) >= 2 * f || (unit === 's' && Math.abs(ms) >= 1e3)) return [fmtNum(ms / f), unit];
  return [fmtNum(ms), 'ms'];
}

/** Bytes in binary units (collective message sizes are powers of two). */
export function fmtBytes(b) {
  if (!finite(b)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (Math.abs(b) >= 1024 && i < units.length - 1) {
    b /= 1024;
    i += 1;
  }
  return `${Number(b.toPrecision(3))} ${units[i]}`;
}

export function fmtSI(v, unit = '') {
  if (!finite(v)) return '—';
  for (const [f, p] of [
    [1e18, 'E'],
    [1e15, 'P'],
    [1e12, 'T'],
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ]) {
    if (Math.abs(v) >= f) return `${(v / f).toPrecision(3)} ${p}${unit}`;
  }
  return `${fmtNum(v)} ${unit}`.trim();
}

// ------------------------------------------------------------------ module calls

/** Calls module entry point `name` and always returns an {ok, result|error} envelope. */
export function call(M, name, ...args) {
  if (!M || typeof M[name] !== 'function') {
    return {
      ok: false,
      error: { code: 'missing_function', path: '', message: `the module has no ${name}() function` },
    };
  }
  try {
    const raw = M[name](...args);
    const out = typeof raw === 'string' ? JSON.parse(raw) : raw;
    return isPlainObject(out) && typeof out.ok === 'boolean' ? out : { ok: true, result: out };
  } catch (e) {
    return {
      ok: false,
      error: { code: 'exception', path: (e && e.path) || '', message: String((e && e.message) || e) },
    };
  }
}

// ------------------------------------------------------------------ charts

/**
 * A line chart: series [{label, cls, points: [[x, y], ...], dash}], optional vertical markers
 * [{x, label, cls}]. y starts at 0 and is clipped at `yMax` when given; x starts at `xMin`.
 */
export function lineChart({
  title,
  xLabel,
  yLabel,
  series,
  markers = [],
  yMax,
  height = 190,
  xMin = 0,
  xTop,
  xTicks,
  xFmt = tick,
  yFmt = tick,
}) {
  const W = 420;
  const H = height;
  const m = { l: 52, r: 22, t: 22, b: 34 };
  // A series' 80 % band ([x, low, high] each) is drawn shaded under its line and counts in the scale.
  const pts = series
    .flatMap((s) => [...s.points, ...(s.band || []).map(([x, , hi]) => [x, hi])])
    .filter(([x, y]) => finite(x) && finite(y));
  const xMax = xTop ?? niceMax(Math.max(...pts.map((p) => p[0]), ...markers.map((k) => k.x).filter(finite), 1e-9));
  const yTop = niceMax(Math.min(yMax ?? Infinity, Math.max(...pts.map((p) => p[1]), 1e-9)));
  const X = (x) => m.l + ((x - xMin) / (xMax - xMin)) * (W - m.l - m.r);
  const Y = (y) => H - m.b - (Math.min(y, yTop) / yTop) * (H - m.t - m.b);
  const root = svg('svg', {
    viewBox: `0 0 ${W} ${H}`,
    width: '100%',
    role: 'img',
    class: 'line-chart',
    'aria-label': title,
  });
  root.append(svg('text', { x: m.l, y: 14, class: 'chart-title' }, title));
  for (let i = 0; i <= 4; i++) {
    const yv = (yTop * i) / 4;
    root.append(svg('line', { x1: m.l, x2: W - m.r, y1: Y(yv), y2: Y(yv), class: 'grid' }));
    root.append(
      svg(
        'text',
        { x: m.l - 5, y: Y(yv), class: 'tick', 'text-anchor': 'end', 'dominant-baseline': 'central' },
        yFmt(yv),
      ),
    );
    if (xTicks) continue;
    const xv = xMin + ((xMax - xMin) * i) / 4;
    root.append(svg('text', { x: X(xv), y: H - m.b + 13, class: 'tick', 'text-anchor': 'middle' }, xFmt(xv)));
  }
  for (const xv of xTicks ?? []) {
    root.append(svg('text', { x: X(xv), y: H - m.b + 13, class: 'tick', 'text-anchor': 'middle' }, xFmt(xv)));
  }
  root.append(svg('text', { x: (m.l + W - m.r) / 2, y: H - 4, class: 'axis-label', 'text-anchor': 'middle' }, xLabel));
  root.append(yAxisLabel(m, H, yLabel));
  for (const k of markers) {
    if (!finite(k.x)) continue;
    const g = svg('g', { class: `marker ${k.cls || ''}`, 'data-x': k.x });
    g.append(svg('line', { x1: X(k.x), x2: X(k.x), y1: m.t, y2: H - m.b }));
    const right = X(k.x) > W - 110; // keep the label inside the plot
    g.append(
      svg(
        'text',
        { x: X(k.x) + (right ? -3 : 3), y: m.t + 9, class: 'marker-label', 'text-anchor': right ? 'end' : 'start' },
        k.label,
      ),
    );
    root.append(g);
  }
  for (const s of series) {
    const b = (s.band || []).filter(([x, lo, hi]) => finite(x) && finite(lo) && finite(hi));
    if (b.length > 1) {
      const edge = (pts) => pts.map(([x, y]) => `${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join('L');
      const upper = b.map(([x, , hi]) => [x, hi]);
      const lower = b.map(([x, lo]) => [x, lo]).reverse();
      root.append(svg('path', { d: `M${edge(upper)}L${edge(lower)}Z`, class: `band ${s.cls}`, 'data-band': s.label }));
    }
  }
  for (const s of series) {
    const p = s.points.filter(([x, y]) => finite(x) && finite(y));
    if (!p.length) continue;
    if (s.line !== false) {
      const d = p.map(([x, y], i) => `${i ? 'L' : 'M'}${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join('');
      root.append(svg('path', { d, class: `series ${s.cls}${s.dash ? ' dashed' : ''}`, 'data-series': s.label }));
    }
    // Dots: each point a circle, named by its title (hover, and focus from the keyboard).
    if (s.dots) {
      s.points.forEach(([x, y], i) => {
        if (!finite(x) || !finite(y)) return;
        const c = svg('circle', {
          cx: X(x).toFixed(1),
          cy: Y(y).toFixed(1),
          r: s.line === false ? 3 : 4,
          class: `dot ${s.cls}`,
          tabindex: 0,
          'data-series': s.label,
        });
        if (s.titles?.[i]) c.append(svg('title', {}, s.titles[i]));
        root.append(c);
      });
    }
  }
  const legend = el(
    'ul',
    { class: 'chart-legend' },
    ...series.map((s) =>
      el(
        'li',
        null,
        el('span', {
          class: s.line === false ? `dot-swatch ${s.cls}` : `line-swatch ${s.cls}${s.dash ? ' dashed' : ''}`,
        }),
        s.label,
      ),
    ),
    series.some((s) => s.band) && el('li', null, 'shaded: its 80 % band'),
  );
  return el('figure', { class: 'chart-box' }, root, legend);
}

// Axis ticks: three significant digits without trailing zeros, thousands grouped.
const tick = (v) => (Math.abs(v) >= 1000 ? fmtInt(v) : String(Number(v.toPrecision(3))));

function niceMax(v) {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const f of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (f * p >= v * 0.999) return f * p;
  return 10 * p;
}

// ------------------------------------------------------------------ form pieces

/** Shows `message` in field `id`'s error box and marks the field invalid (an empty one clears both). */
export function showFieldError(id, message) {
  $(`err-${id}`).textContent = message;
  $(id).classList.toggle('invalid', Boolean(message));
  if (message) $(id).setAttribute('aria-invalid', 'true');
  else $(id).removeAttribute('aria-invalid');
}

/** A labelled field with its error box `err-<id>` (the error of the request path it owns). */
// The error under a field is no alert (issue 11: 66 of them spoke on every keystroke): the field
// is aria-invalid and described by its error and hint, which a screen reader reads on focus.
export function field(id, label, control, hint) {
  control.id = id;
  control.setAttribute('aria-describedby', hint ? `err-${id} hint-${id}` : `err-${id}`);
  return el(
    'div',
    { class: 'field' },
    el('label', { for: id, text: label }),
    control,
    hint ? el('p', { class: 'hint', id: `hint-${id}`, text: hint }) : null,
    el('div', { class: 'field-error', id: `err-${id}` }),
  );
}

/** The values of the request keys that take one of a list, as the module's schema() gives them
 *  ({precision: {weights, gguf_weights, attention_weights, kv_cache, activations, compute},
 *  parallelism: {moe_dispatch}, workload: {recompute, optimizer}}): loadSchema fills it before
 *  any form is built, so the page repeats none of the core's lists. */
export const SCHEMA = { precision: {}, parallelism: {}, workload: {}, hardware: {} };
/** The weight types a request can name, and llama.cpp's GGUF ones among them, which type their
 *  tensors themselves (no separate attention type); filled by loadSchema. */
export const WEIGHT_TYPES = [];
export const GGUF_TYPES = new Set();
export const schemaList = (group, key) => (SCHEMA[group] && SCHEMA[group][key]) || [];
/** The words for the two ways MoE tokens reach their experts (the values are the module's). */
export const DISPATCH_LABELS = {
  all_reduce: 'all-reduce (gather all tokens)',
  all_to_all: 'all-to-all (DeepEP, needs DP attention and EP = TP)',
};

/** Reads the module's schema() into SCHEMA, WEIGHT_TYPES and GGUF_TYPES; returns its envelope. */
export function loadSchema(M) {
  const r = call(M, 'schema');
  if (r.ok && isPlainObject(r.result)) {
    Object.assign(SCHEMA, r.result);
    WEIGHT_TYPES.splice(0, WEIGHT_TYPES.length, ...schemaList('precision', 'weights'));
    for (const t of schemaList('precision', 'gguf_weights')) GGUF_TYPES.add(t);
  }
  return r;
}

/**
 * ` · $6.49 per million tokens ($0.10 at batch 532) at $3.49/GPU·h (RunPod Secure Cloud, …)` for a
 * result's cost: at the estimate, at the cheapest point (inference: the largest batch that fits;
 * serving: saturation), and the price with where it was listed when it is a preset's list price.
 * '' without a cost.
 */
export function costText(res) {
  if (typeof res.usd_per_million_output_tokens !== 'number') return '';
  const c = res.cost_basis || {};
  let best = '';
  if (typeof c.usd_per_million_output_tokens_at_max_batch === 'number') {
    best = ` ($${fmtNum(c.usd_per_million_output_tokens_at_max_batch)} at batch ${fmtInt(c.max_batch_size)})`;
  } else if (typeof c.usd_per_million_output_tokens_at_saturation === 'number') {
    best = ` ($${fmtNum(c.usd_per_million_output_tokens_at_saturation)} at saturation)`;
  }
  // A price the request gave is echoed in it; a list price is the hardware's, named with its source.
  const listed = typeof c.basis === 'string' && !('cost_per_gpu_hour_usd' in (res.request || {}));
  const where = listed ? ` (${c.basis.split(' (')[0]})` : '';
  return ` · $${fmtNum(res.usd_per_million_output_tokens)} per million tokens${best} at $${fmtNum(c.usd_per_gpu_hour)}/GPU·h${where}`;
}

/**
 * ` · 0.15 J/token at 520 of 700 W` for a result's `energy` (the power model's mean power of the
 * GPUs, of their board power); '' for null.
 */
export function energyText(energy) {
  if (!energy || typeof energy.joules_per_output_token !== 'number') return '';
  return ` · ${fmtNum(energy.joules_per_output_token)} J/token at ${fmtInt(energy.power_W)} of ${fmtInt(energy.board_power_W)} W`;
}

export const numberInput = (attrs = {}) => el('input', { type: 'number', inputmode: 'decimal', ...attrs });

export function select(options) {
  return el(
    'select',
    null,
    ...options.map((o) =>
      Array.isArray(o) ? el('option', { value: o[0], text: o[1] }) : el('option', { value: o, text: o }),
    ),
  );
}

/** The family a hardware preset is listed under in the pickers. */
export function hardwareFamily(p) {
  const hw = (p && p.hardware) || {};
  if (hw.vendor === 'amd') return 'AMD Instinct';
  if (hw.vendor === 'apple') return 'Apple silicon (unified memory)';
  if (hw.vendor === 'intel') return 'Intel Gaudi';
  if (/geforce/i.test(hw.name || p.name || '')) return 'NVIDIA GeForce (consumer)';
  if (/jetson/i.test(hw.name || p.name || '')) return 'NVIDIA Jetson (edge, unified memory)';
  if (String(hw.scaleup_link || '').startsWith('nvlink')) return 'NVIDIA datacenter (NVLink)';
  return 'NVIDIA PCIe (datacenter and workstation)';
}

/** A preset's key figures for a picker: memory, bandwidth, dense 16-bit peak, list price. */
export function hardwareFigures(p) {
  const hw = (p && p.hardware) || {};
  const peaks = hw.dense_peak_TFLOPS || {};
  const tflops = peaks.bf16 ?? peaks.fp16;
  const bits = [];
  // The memory programs get (an H100 "80GB" gives 85.06 GB), whole GB.
  if (hw.hbm_GB) bits.push(`${Math.round(hw.hbm_GB)} GB`);
  if (hw.hbm_bandwidth_GBps) bits.push(`${Number((hw.hbm_bandwidth_GBps / 1000).toFixed(2))} TB/s`);
  if (tflops) bits.push(`${Math.round(tflops)} TFLOPS`);
  if (hw.on_demand_price?.usd_per_gpu_hour) bits.push(`$${hw.on_demand_price.usd_per_gpu_hour}/h`);
  return bits.join(' · ');
}

/** <optgroup>s of hardware presets by family (in the order first met), each option with its figures. */
export function hardwareOptions(list) {
  const groups = new Map();
  for (const p of list) {
    const family = hardwareFamily(p);
    if (!groups.has(family)) groups.set(family, []);
    const figures = hardwareFigures(p);
    groups
      .get(family)
      .push(el('option', { value: p.id, text: figures ? `${p.name || p.id} — ${figures}` : p.name || p.id }));
  }
  return [...groups].map(([label, opts]) => el('optgroup', { label }, ...opts));
}

/** The preset id a name stands for: the id itself, or the preset whose `aliases` hold it (any case). */
export function presetIdFor(list, name) {
  const n = String(name).toLowerCase();
  const p = list.find((x) => x.id === name || x.id === n || (Array.isArray(x.aliases) && x.aliases.includes(n)));
  return p ? p.id : null;
}

/** A JSON object pasted into a custom box: {value} or {error} (not JSON, or not an object). */
export function parseObject(text) {
  let obj;
  try {
    obj = JSON.parse(text);
  } catch (e) {
    return { error: `Not valid JSON: ${e.message}` };
  }
  return isPlainObject(obj) ? { value: obj } : { error: 'Expected a JSON object ({ … }).' };
}

// ------------------------------------------------------------------ view pieces
// Shared by the training, serving and collective views; ids are `${prefix}-<name>`.

/** Wires a view's form: never submitted; an edit drops the link's error on the edited field. */
export function wireForm(form, view, edited) {
  form.addEventListener('submit', (e) => e.preventDefault());
  form.addEventListener('input', (e) => {
    const id = e.target.id.replace(/-custom$/, '');
    view.linkErrors.delete(id);
    view.linkErrors.delete(`${id}-custom`);
    edited();
  });
}

/** A headline number (value and unit), with a line under it when `sub` is given. */
export function metric(prefix, id, label, { sub, field: key } = {}) {
  return el(
    'div',
    { class: 'metric' },
    el('div', { class: 'metric-label', text: label }),
    el(
      'div',
      { class: 'metric-value' },
      el('span', { class: 'num', id: `${prefix}-${id}`, 'data-field': key, text: '—' }),
      ' ',
      el('span', { class: 'unit', id: `${prefix}-${id}-unit` }),
    ),
    sub === undefined ? null : el('div', { class: 'metric-sub', id: `${prefix}-${id}-sub`, text: sub }),
    el('div', { class: 'metric-compare', id: `${prefix}-${id}-compare`, hidden: true }),
  );
}

/**
 * One headline's ratio to the pinned result's ("×0.62 vs 12.07 ms pinned", `shown` the pinned
 * value as text): `data-better` is true when it moved the good way, "same" within 0.5 %; hidden
 * when either value is missing.
 */
function showComparison(node, now, then, lowerIsBetter, shown) {
  if (!Number.isFinite(now) || !Number.isFinite(then) || then <= 0) {
    node.hidden = true;
    return;
  }
  const ratio = now / then;
  node.textContent = `×${ratio >= 10 || ratio < 0.1 ? ratio.toPrecision(2) : ratio.toFixed(2)} vs ${shown} pinned`;
  node.dataset.ratio = String(ratio);
  node.dataset.better = Math.abs(ratio - 1) < 5e-3 ? 'same' : String(lowerIsBetter ? ratio < 1 : ratio > 1);
  node.hidden = false;
}

/**
 * Pin to compare: `compared` lists [id, value of a result, lower is better, text of a value].
 * The button pins a result or unpins; render() shows every headline's ratio to the pinned one in
 * its compare line. A view built with metric() gets the button, the note and the lines
 * (`${prefix}-pin`, `${prefix}-compare-note`, `${prefix}-<id>-compare`); a page with its own
 * elements passes them (`button`, `note`, `compareId`).
 */
export class Pin {
  constructor(prefix, compared, { button, note, compareId } = {}) {
    Object.assign(this, { compared, pinned: null });
    this.compareId = compareId ?? ((id) => `${prefix}-${id}-compare`);
    this.button =
      button ??
      el('button', {
        type: 'button',
        class: 'secondary pin',
        id: `${prefix}-pin`,
        'aria-pressed': 'false',
        text: 'Pin to compare',
      });
    this.note = note ?? el('p', { class: 'compare-note', id: `${prefix}-compare-note`, hidden: true });
  }

  /**
   * Wires the button to a view: a click pins the view's result while it is current (its root's
   * data-status "ready"; a stale view only unpins), labelled by `label()`.
   */
  attach(view, label) {
    this.button.addEventListener('click', () =>
      this.toggle(view.root.dataset.status === 'ready' ? view.result : null, label()),
    );
  }

  /** Pins `result` (null: nothing to pin, so it only unpins), labelled `label`. */
  toggle(result, label) {
    this.pinned = this.pinned || !result ? null : { result, label };
    this.button.textContent = this.pinned ? 'Unpin' : 'Pin to compare';
    this.button.setAttribute('aria-pressed', String(Boolean(this.pinned)));
    this.render(result);
  }

  render(result) {
    const { pinned } = this;
    this.note.hidden = !pinned;
    if (pinned) this.note.textContent = `Compared with the pinned setup: ${pinned.label}`;
    for (const [id, value, lowerIsBetter, text] of this.compared) {
      const node = $(this.compareId(id));
      if (!pinned) node.hidden = true;
      else showComparison(node, value(result), value(pinned.result), lowerIsBetter, text(value(pinned.result)));
    }
  }
}

/**
 * A setup that does not fit has no numbers: `text` (its verdict) shows in `verdictId` in place of
 * the elements `hiddenIds` (the headline cards, and charts of numbers); null shows them again.
 * Returns the verdict element.
 */
export function showVerdict(verdictId, text, ...hiddenIds) {
  const unfit = text !== null;
  for (const id of hiddenIds) $(id).hidden = unfit;
  const verdict = $(verdictId);
  verdict.hidden = !unfit;
  verdict.textContent = unfit ? text : '';
  return verdict;
}

/** What every "80% band" means, once under each tab's headline numbers (issue 44 item 2). */
export function bandNote() {
  return el('p', {
    class: 'band-note',
    text:
      '80% band: the range that held 80% of the published measurements of each source when that source ' +
      'was left out of every fit (leave one source out; docs/validation.md gives each kind its coverage and ' +
      'width). A band on one side of the number means the measurements lean that way.',
  });
}

/** " · 80% band 1.2–3.4 ms" for an interval {low, high} formatted by `fmt`, or '' without one: the
 *  band measured on sources flopcast never fitted (docs/validation.md). */
export function bandText(band, fmt) {
  return band && Number.isFinite(band.low) && Number.isFinite(band.high)
    ? ` · 80% band ${fmt(band.low)}–${fmt(band.high)}`
    : '';
}

/** Shows a headline number; `sub` (when given) replaces the line under it. */
export function setMetric(prefix, id, value, [text, unit], sub) {
  const n = $(`${prefix}-${id}`);
  n.textContent = text;
  n.dataset.value = String(value);
  $(`${prefix}-${id}-unit`).textContent = unit;
  if (sub !== undefined) $(`${prefix}-${id}-sub`).textContent = sub;
}

/** The banner for errors without a field, and the one saying the results are out of date. */
export const banners = (prefix, staleText) => [
  el('div', { class: 'general-error', id: `${prefix}-general-error`, role: 'alert', hidden: true }),
  el('div', { class: 'stale-banner', id: `${prefix}-stale`, role: 'status', hidden: true, text: staleText }),
  el('p', { class: 'visually-hidden', id: `${prefix}-announce`, role: 'status' }),
];

export function markStale(view, prefix, stale) {
  view.root.classList.toggle('stale', stale);
  view.root.dataset.status = stale ? 'stale' : 'ready';
  $(`${prefix}-stale`).hidden = !stale;
  if (!stale && !view.root.hidden) followLink(view.M, view.request);
  // After the view has drawn its numbers (the rest of this recompute).
  if (!stale) queueMicrotask(() => announceHeadline(view.root, $(`${prefix}-announce`)));
}

/**
 * Screen readers hear one short line per recompute, the headline numbers ("TTFT 6.51 ms, TPOT
 * 5.96 ms, …"), from a small status region; the results sections are not live regions (issue 11:
 * each was ~5,000 characters re-read on every keystroke). Nothing when the headline is hidden (a
 * setup that does not fit: its verdict is a status of its own).
 */
export function announceHeadline(root, status) {
  const headline = root.querySelector('.headline');
  if (!status || !headline || headline.hidden) return;
  const text = [...headline.querySelectorAll('.metric')]
    .map((m) =>
      [m.querySelector('.metric-label'), m.querySelector('.metric-value')]
        .map((e) => (e?.textContent ?? '').replace(/\s+/g, ' ').trim())
        .join(' '),
    )
    .join(', ');
  if (status.textContent !== text) status.textContent = text;
}

export const warningsPanel = (prefix) =>
  el(
    'div',
    { class: 'panel warn-panel', id: `${prefix}-warnings-panel`, hidden: true },
    el('h3', { text: 'Warnings' }),
    el('ul', { class: 'warnings', id: `${prefix}-warnings` }),
  );

export function showWarnings(prefix, warnings) {
  const list = warnings || [];
  $(`${prefix}-warnings`).replaceChildren(...list.map((w) => el('li', { text: String(w) })));
  $(`${prefix}-warnings-panel`).hidden = !list.length;
}

/** The panel a view's search fills: a heading, its run button (`${P}-search-run`) and Cancel
 *  (`${P}-search-cancel`, shown while it runs), a note (`${P}-search-note`, `hint` until a search
 *  runs, then its progress and outcome), the table of results (`${P}-search-table`) and any
 *  `extra` elements after it. `data-state` of the panel: idle, running, done, error, cancelled. */
export function searchPanel(P, title, button, hint, ...extra) {
  const cancel = el('button', {
    type: 'button',
    class: 'secondary',
    id: `${P}-search-cancel`,
    text: 'Cancel',
    hidden: true,
  });
  cancel.addEventListener('click', () => cancelSearch(P));
  return el(
    'div',
    { class: 'panel', id: `${P}-search`, 'data-state': 'idle' },
    el(
      'div',
      { class: 'panel-head' },
      el('h3', { text: title }),
      el('button', { type: 'button', id: `${P}-search-run`, text: button }),
      cancel,
    ),
    el('p', { class: 'hint', id: `${P}-search-note`, text: hint }),
    el('div', { class: 'table-wrap' }, el('table', { id: `${P}-search-table`, class: 'breakdown candidates' })),
    ...extra,
  );
}

/** Puts `text` in the header's box, selected, and on the clipboard where the browser allows. */
export function offer(text, ready) {
  const status = $('share-status');
  const out = $('share-url');
  out.value = text;
  out.hidden = false;
  out.focus();
  out.select();
  status.className = 'share-status';
  status.textContent = ready;
  if (navigator.clipboard?.writeText) {
    navigator.clipboard.writeText(text).then(
      () => {
        status.textContent = 'Copied to clipboard';
      },
      () => {
        status.textContent = `${ready} — copy it from the box`;
      },
    );
  }
}

/** Puts the link of `request` in the address bar (no history entry), so a reload keeps edits. */
export function followLink(M, request) {
  if (!request) return;
  const r = call(M, 'encode_link', JSON.stringify(request));
  if (r.ok && location.hash.slice(1) !== r.result) history.replaceState(null, '', `#${r.result}`);
}

/** Offers the page's link to `request` in the header's box, or says why the module cannot encode
 * it; returns the link's fragment (null when refused). */
export function offerRequestLink(M, request) {
  const r = call(M, 'encode_link', JSON.stringify(request));
  if (!r.ok) {
    const status = $('share-status');
    status.className = 'share-status bad';
    status.textContent = `Cannot share: ${r.error.message}`;
    return null;
  }
  offer(`${location.origin}${location.pathname}#${r.result}`, 'Link ready');
  return r.result;
}

/** A shell word: single-quoted, embedded quotes closed and escaped. */
const shellQuote = (s) => `'${s.replaceAll("'", "'\\''")}'`;

/** The command that prices `request` with the CLI (the request piped to `flopcast estimate`). */
export function cliLine(request) {
  return `echo ${shellQuote(JSON.stringify(request))} | flopcast estimate --request - --format json`;
}

/**
 * Fills a search table: a header row of `head`, then one row per candidate, its rank, `cells(c)`
 * and three actions on its `request`: Use (`use`: into the form), Link (the page's link to it)
 * and CLI (the command that prices it), the last two offered in the header's box, then those of
 * `more` ([text, aria label, run(candidate)]). Columns from `firstNum` on are numbers.
 */
export function fillCandidates(table, head, firstNum, candidates, cells, use, M, more = []) {
  const numeric = (i) => i >= firstNum && i < head.length - 1;
  table.dataset.stale = 'false';
  table.replaceChildren(
    el(
      'thead',
      null,
      el('tr', null, ...head.map((h, i) => el('th', { scope: 'col', class: numeric(i) ? 'num' : null, text: h }))),
    ),
    el(
      'tbody',
      null,
      ...candidates.map((c, i) => {
        const rank = String(i + 1);
        const action = (text, label, run) => {
          const b = el('button', { type: 'button', class: 'secondary', 'data-rank': rank, 'data-action': text, text });
          b.setAttribute('aria-label', `${label} ${rank}`);
          b.addEventListener('click', run);
          return b;
        };
        return el(
          'tr',
          { 'data-rank': rank },
          el('th', { scope: 'row', text: rank }),
          ...cells(c),
          el(
            'td',
            { class: 'row-actions' },
            action('Use', 'Use candidate', () => use(c.request)),
            action('Link', 'Link to candidate', () => offerRequestLink(M, c.request)),
            action('CLI', 'CLI command for candidate', () => offer(cliLine(c.request), 'Command ready')),
            ...more.map(([text, label, run]) => action(text, label, () => run(c))),
          ),
        );
      }),
    ),
  );
}

/** A search panel (`${P}-search-table`, `${P}-search-note`) describes the setup it ran on: once the
 * setup's search request `q` differs from the one searched (`key`), it says so. */
export function showSearchStaleness(P, key, q, note) {
  if (!key) return;
  const stale = !q || JSON.stringify(q) !== key;
  $(`${P}-search-table`).dataset.stale = String(stale);
  $(`${P}-search-note`).textContent = stale ? 'The setup changed since this search: search again.' : note;
}

// ---------------------------------------------------------------- workers

let compiled = null; // the page's compiled module: every worker instantiates it
let prewarmedSim = null;
// The one search running on the page (either view's): searches run one at a time in their own
// worker, so that a long one leaves the page responsive and Cancel can end it.
const search = { worker: null, id: 0, P: null, timer: null };

/** The envelope a worker (sim-worker.js) sent as JSON text `out`; one that does not parse becomes
 *  an error envelope naming `what` sent it. */
export function workerEnvelope(out, what) {
  try {
    return JSON.parse(out);
  } catch (e) {
    return { ok: false, error: { path: '', message: `unreadable ${what} output: ${e.message}` } };
  }
}

/** A worker that answers {id, request} with the module's envelope (sim-worker.js). */
function newWorker() {
  const w = new Worker(new URL('./sim-worker.js', import.meta.url), { type: 'module' });
  w.postMessage({ wasmModule: compiled });
  return w;
}

/** Starts the simulator's and the searches' workers with the page (views.init), so that their
 *  scripts and their instances of the module load with it and Simulate or Search makes no
 *  request. */
export function prewarmWorkers(wasmModule) {
  compiled = wasmModule ?? null;
  prewarmedSim ??= newWorker();
  search.worker ??= newWorker();
}

/** The simulator's worker: the prewarmed one first, then a new one (after a Cancel ended it). */
export function takeWorker() {
  const w = prewarmedSim ?? newWorker();
  prewarmedSim = null;
  return w;
}

/**
 * Shows a run's buttons: `run` disabled (also when `blocked`) and `cancel` shown while it runs.
 * The keyboard focus follows from the one pressed to the other (issue 11: it was lost when the
 * pressed button was disabled).
 */
export function setRunButtons(run, cancel, running, blocked = false) {
  const focused = document.activeElement === run || document.activeElement === cancel;
  run.disabled = running || blocked;
  cancel.hidden = !running;
  if (focused) (running ? cancel : run).focus();
}

function setSearchRunning(P, running, state) {
  clearInterval(search.timer);
  search.timer = null;
  setRunButtons($(`${P}-search-run`), $(`${P}-search-cancel`), running);
  $(`${P}-search`).dataset.state = state;
  search.P = running ? P : null;
}

/** Ends the running search of panel `P` by ending its worker (the module cannot be interrupted);
 *  the next search starts a new worker. */
export function cancelSearch(P, message = 'Search cancelled.') {
  if (search.P !== P) return;
  search.worker?.terminate();
  search.worker = null;
  search.id += 1;
  setSearchRunning(P, false, 'cancelled');
  $(`${P}-search-note`).textContent = message;
}

/**
 * Runs a search panel's request `q` in the search worker, the note counting the seconds and
 * Cancel shown meanwhile; then `render(result, seconds)`, or the reason in the note, the table
 * emptied and the module's error handed to `refused` (a panel field it names shows it too). A
 * null `q` means invalid fields. A search started while another runs ends that one.
 */
export function runSearch(P, q, render, refused = () => {}) {
  const note = $(`${P}-search-note`);
  if (!q) {
    note.textContent = 'Fix the highlighted fields first.';
    return;
  }
  if (search.P) cancelSearch(search.P, 'Stopped: another search started.');
  search.worker ??= newWorker();
  const id = ++search.id;
  const t0 = performance.now();
  const seconds = () => (performance.now() - t0) / 1000;
  setSearchRunning(P, true, 'running');
  const tick = () => {
    note.textContent = `Searching… ${seconds().toFixed(1)} s`;
  };
  tick();
  search.timer = setInterval(tick, 100);
  const fail = (message) => {
    setSearchRunning(P, false, 'error');
    note.textContent = message;
    $(`${P}-search-table`).replaceChildren();
  };
  search.worker.onmessage = (e) => {
    if (e.data.id !== search.id) return;
    const env = workerEnvelope(e.data.out, 'search');
    if (!env.ok) {
      fail(env.error.message);
      refused(env.error);
      return;
    }
    setSearchRunning(P, false, 'done');
    render(env.result, seconds());
  };
  search.worker.onerror = (e) => {
    e.preventDefault();
    search.worker?.terminate();
    search.worker = null;
    fail(`The search worker failed: ${e.message || 'unknown error'}`);
  };
  search.worker.postMessage({ id, request: JSON.stringify(q) });
}
