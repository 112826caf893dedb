// A form described by a field table: builds the request from its inputs, puts a request (from a
// link) back into them, keeps request keys it has no input for, and shows each error beside the
// input that owns the error's `path`. Used by every view: the training, serving and collective
// views build their inputs with render(); the inference view's inputs are in index.html (prefix
// '', ids are the field keys) and its two spec fields are wired by adopt().

import {
  $,
  el,
  CUSTOM,
  call,
  clone,
  field,
  flatten,
  hardwareOptions,
  isPlainObject,
  numberInput,
  parseObject,
  presetIdFor,
  select,
  setPath,
  showFieldError,
} from './ui.js';
import { ModelFields } from './model-fields.js';
import { WhatIf } from './what-if.js';

// Kinds: int, num, size (bytes, as "64MiB" or 4096, read by the module), text, bool (a checkbox,
// or a select of '' and 'true'), choice, spec (model or hardware: preset select plus a custom
// JSON box), pick (one select that sets one of several paths, e.g. parallelism.zero or
// parallelism.fsdp: option values are "path=json").
// Options: `optional` (an empty input leaves the key out), `omitIf` (this value leaves the key
// out: the core's default, kept out of the request and the link), `owns` (more request paths
// whose errors belong to this input, e.g. `hf_config` to the model).

/** Whether a pasted object is a Hugging Face config.json rather than a flopcast model object. */
function looksLikeHfConfig(obj) {
  if ('num_layers' in obj && 'hidden_size' in obj && !('num_hidden_layers' in obj)) return false;
  return [
    'num_hidden_layers',
    'num_attention_heads',
    'model_type',
    'architectures',
    'max_position_embeddings',
    'n_layer',
    'n_embd',
  ].some((k) => k in obj);
}

/** The layers of a hybrid model's pattern by kind, e.g. "23 Mamba-2, 6 attention, 23 MoE". */
function hybridSummary(pattern, kda) {
  const count = (c) => pattern.split(c).length - 1;
  return [
    ['M', 'Mamba-2'],
    ['S', 'Mamba-1'],
    ['G', kda ? 'Kimi Delta Attention' : 'gated DeltaNet'],
    ['*', 'attention'],
    ['-', 'dense FFN'],
    ['E', 'MoE'],
  ]
    .filter(([c]) => count(c) > 0)
    .map(([c, name]) => `${count(c)} ${name}`)
    .join(', ');
}

/** One line saying what a converted Hugging Face config became. */
function hfSummary(m) {
  const window = m.sliding_window_tokens
    ? `, ${m.local_attention || 'sliding'} window ${m.sliding_window_tokens}` +
      (m.global_attention_every ? ` (every ${m.global_attention_every}th layer global)` : '')
    : '';
  return (
    `Converted from a Hugging Face config.json${m.name ? ` (${m.name})` : ''}: ` +
    `${m.num_layers} layers, hidden size ${m.hidden_size}, ${m.num_heads} heads / ${m.num_kv_heads} KV heads` +
    `${m.num_experts ? `, ${m.num_experts} experts (top-${m.experts_per_token})` : ''}` +
    `${m.shared_experts ? `, ${m.shared_experts} shared` : ''}` +
    `${m.kv_lora_rank ? `, latent attention (KV rank ${m.kv_lora_rank})` : ''}${window}` +
    `${m.layer_pattern ? `, hybrid: ${hybridSummary(m.layer_pattern, m.gdn_channel_gate)}` : ''}.`
  );
}

export class Form {
  constructor({ prefix, M, presets, fields }) {
    Object.assign(this, { prefix, M, presets, fields, extras: {} });
    this.byId = new Map(fields.map((f) => [this.id(f), f]));
    this.lastPreset = {}; // per spec path: the preset a custom box starts from
    this.fileNames = {}; // per spec path: the file dropped on its custom box (a model's name fallback)
    this.onApply = []; // run when a request is put into the inputs (keepCount's chosen counts)
  }

  id(f) {
    return this.prefix ? `${this.prefix}-${f.key}` : f.key;
  }

  /** The field of a key of the table. */
  fieldOf(key) {
    return this.fields.find((f) => f.key === key);
  }

  /** The field that sets a request path, or undefined. */
  fieldAt(path) {
    return this.fields.find((f) => f.path === path);
  }

  /** The banner and the "also set" note of the view. */
  get bannerId() {
    return this.prefix ? `${this.prefix}-general-error` : 'general-error';
  }

  get extrasId() {
    return this.prefix ? `${this.prefix}-extras` : 'extras-note';
  }

  /** The <div class="field"> of one field; spec fields get their custom box too. */
  render(key) {
    const f = this.fieldOf(key);
    const id = this.id(f);
    if (f.kind === 'spec') {
      const list = this.presets[f.path === 'model' ? 'models' : 'hardware'];
      const sel =
        f.path === 'hardware'
          ? el('select', null, ...hardwareOptions(list), el('option', { value: CUSTOM, text: 'Custom…' }))
          : select([...list.map((p) => [p.id, p.name || p.id]), [CUSTOM, 'Custom…']]);
      const ta = el('textarea', { rows: 8, spellcheck: 'false' });
      const box = field(
        `${id}-custom`,
        `Custom ${f.path} — paste or drop a flopcast ${f.path} object${f.path === 'model' ? ' or a Hugging Face config.json' : ''}`,
        ta,
      );
      box.hidden = true;
      box.id = `${id}-custom-box`;
      box.lastChild.before(el('p', { class: 'hint', id: `${id}-custom-info` }));
      ta.setAttribute('aria-describedby', `err-${id}-custom ${id}-custom-info`);
      this.wireSpec(f, sel, ta, box);
      return el('div', null, field(id, f.label, sel), f.path === 'hardware' ? this.whatIf.element : null, box);
    }
    let control;
    if (f.kind === 'bool') control = el('input', { type: 'checkbox' });
    else if (f.kind === 'choice' || f.kind === 'pick') control = select(f.choices);
    else if (f.kind === 'text' || f.kind === 'size') control = el('input', { type: 'text', spellcheck: 'false' });
    else control = numberInput({ min: f.min ?? 0, step: f.kind === 'int' ? 1 : 'any', placeholder: f.placeholder });
    const div = field(id, f.label, control, f.hint);
    if (f.kind === 'bool') div.classList.add('check');
    return div;
  }

  /**
   * Keeps a count valid while the user edits what it must hold (issue 11: TP 4 with one GPU was an
   * error to fix by hand): an edit of one of `factorKeys` raises `countKey` to the smallest
   * multiple of the factors' product at or above it (an empty optional factor counts 1). Where
   * `exactKey` (e.g. training's DP) is set, the count is the product itself. It runs before the
   * view's own listeners (beforeInput), so the view computes with the adjusted count.
   */
  keepCount(countKey, factorKeys, exactKey) {
    const countId = this.id(this.fieldOf(countKey));
    const factorIds = factorKeys.map((k) => this.id(this.fieldOf(k)));
    const exactId = exactKey && this.id(this.fieldOf(exactKey));
    const int = (id) => {
      const v = $(id).value.trim();
      return v === '' ? null : Number(v);
    };
    // The count the user chose (typed, or from a link): adjustments start from it, so that TP 3
    // then TP 2 on 8 GPUs gives 9 and then 8, not 10.
    let chosen = null;
    this.onApply.push(() => (chosen = null));
    this.beforeInput((target) => {
      if (target.id === countId) chosen = null;
      if (!factorIds.includes(target.id)) return;
      const factors = factorIds.map((id) => int(id) ?? 1);
      const count = int(countId);
      if (![count, ...factors].every((v) => Number.isInteger(v) && v >= 1)) return;
      const from = chosen ?? count;
      const product = factors.reduce((a, b) => a * b, 1);
      const want = exactId && int(exactId) !== null ? product : Math.ceil(from / product) * product;
      if (want === count) return;
      chosen = from;
      $(countId).value = String(want);
    });
  }

  /** Sets `key` to `value` when an edit of `whenKey` makes it `whenValue` (PP back to 1: one
   *  virtual stage). */
  resetWith(key, whenKey, whenValue, value) {
    const id = this.id(this.fieldOf(key));
    const whenId = this.id(this.fieldOf(whenKey));
    this.beforeInput((target) => {
      if (target.id === whenId && target.value.trim() === String(whenValue)) $(id).value = String(value);
    });
  }

  /** Runs `fn(target)` on every input event before the views' own listeners (capture phase). */
  beforeInput(fn) {
    document.addEventListener('input', (e) => fn(e.target), true);
  }

  /** Wires a spec field whose select, custom box and textarea are already in the page. */
  adopt(key) {
    const f = this.fieldOf(key);
    const id = this.id(f);
    const box = $(`${id}-custom-box`);
    this.wireSpec(f, $(id), $(`${id}-custom`), box);
    if (this.whatIf && f.path === 'hardware') box.before(this.whatIf.element);
  }

  /** A spec field's parts: the model editor or the what-if factors; a custom box that starts
   *  from the last preset chosen and takes a dropped file. */
  wireSpec(f, sel, ta, box) {
    const list = this.presets[f.path === 'model' ? 'models' : 'hardware'];
    if (f.path === 'model') this.modelFields = new ModelFields(ta, () => this.customObject('model', ta.value));
    if (f.path === 'hardware') this.whatIf = new WhatIf(this.id(f));
    sel.addEventListener('input', () => {
      if (sel.value === CUSTOM && !ta.value.trim()) {
        const p = list.find((x) => x.id === this.lastPreset[f.path]) || list[0];
        if (p && isPlainObject(p[f.path])) ta.value = JSON.stringify(p[f.path], null, 2);
      } else if (sel.value !== CUSTOM) {
        this.lastPreset[f.path] = sel.value;
      }
      box.hidden = sel.value !== CUSTOM;
      if (f.path === 'hardware') this.whatIf.show(sel.value !== CUSTOM);
    });
    ta.addEventListener('input', (e) => {
      if (e.isTrusted) delete this.fileNames[f.path]; // typed or pasted: no file name
    });
    ta.addEventListener('dragover', (e) => {
      e.preventDefault();
      ta.classList.add('dragging');
    });
    ta.addEventListener('dragleave', () => ta.classList.remove('dragging'));
    ta.addEventListener('drop', async (e) => {
      const file = e.dataTransfer?.files?.[0];
      ta.classList.remove('dragging');
      if (!file) return;
      e.preventDefault();
      ta.value = await file.text();
      this.fileNames[f.path] = file.name;
      ta.dispatchEvent(new Event('input', { bubbles: true }));
    });
  }

  /** Reads the inputs: {request, inputErrors: Map(id -> message)}. */
  build(base) {
    const req = { ...clone(this.extras), ...base };
    const errors = new Map();
    for (const f of this.fields) {
      const id = this.id(f);
      const input = $(id);
      if (f.kind === 'spec') {
        if (input.value !== CUSTOM && f.path === 'hardware') {
          const { scale, errors: bad } = this.whatIf.read();
          for (const [k, v] of bad) errors.set(k, v);
          req.hardware = this.whatIf.hardware(input.value, scale);
          continue;
        }
        if (input.value !== CUSTOM) {
          req[f.path] = input.value;
          continue;
        }
        const r = this.customObject(f.path, $(`${id}-custom`).value);
        const info = $(`${id}-custom-info`);
        if (info) info.textContent = r.info || '';
        if (r.error) errors.set(`${id}-custom`, r.error);
        else req[f.path] = r.value;
        if (f.path === 'model' && !r.error) this.modelFields.sync(r.value);
        continue;
      }
      let value;
      if (f.kind === 'bool') {
        value = input.type === 'checkbox' ? input.checked : input.value === 'true';
      } else if (f.kind === 'pick') {
        if (!input.value) continue; // "default": the key is left out
        const [path, json] = input.value.split('=');
        setPath(req, path, JSON.parse(json));
        continue;
      } else if (f.kind === 'size') {
        // "64MiB", "1GB" or 4096, read by the module as the CLI reads --bytes.
        const r = call(this.M, 'parse_size', input.value.trim());
        if (!r.ok) {
          errors.set(id, `${f.path}: ${r.error.message}`);
          continue;
        }
        value = r.result;
      } else if (f.kind === 'choice' || f.kind === 'text') {
        value = f.kind === 'text' ? input.value.trim() : input.value;
        if (value === '' && f.optional) continue;
      } else {
        const raw = input.value.trim();
        if (raw === '' && f.optional) continue;
        value = Number(raw);
        if (raw === '' || !Number.isFinite(value)) {
          errors.set(id, 'Enter a number.');
          continue;
        }
      }
      if ('omitIf' in f && value === f.omitIf) continue;
      setPath(req, f.path, value);
    }
    return { request: req, inputErrors: errors };
  }

  /** A custom box's object: {value, info} (info says what a Hugging Face config became) or {error}. */
  customObject(kind, text) {
    if (!text.trim())
      return {
        error: `Paste a flopcast ${kind} object${kind === 'model' ? ' or a Hugging Face config.json' : ''}.`,
      };
    const parsed = parseObject(text);
    if (parsed.error || kind !== 'model' || !looksLikeHfConfig(parsed.value)) return parsed;
    const r = call(this.M, 'model_from_hf_config', text, this.fileNames.model || '');
    return r.ok ? { value: r.result, info: hfSummary(r.result) } : { error: r.error.message };
  }

  /** Puts a request into the inputs; keys without an input go to `extras`. Returns problems. */
  apply(request) {
    const problems = [];
    this.extras = {};
    for (const f of this.onApply) f();
    for (const [path, value] of Object.entries(flatten(request))) {
      if (path === 'task' || path === 'schema_version' || path === 'mode') continue;
      const f = this.fields.find(
        (x) => x.path === path || (x.kind === 'pick' && x.choices.some(([v]) => v.startsWith(`${path}=`))),
      );
      if (!f) {
        setPath(this.extras, path, value);
        continue;
      }
      const id = this.id(f);
      const input = $(id);
      if (f.kind === 'spec') {
        const list = this.presets[f.path === 'model' ? 'models' : 'hardware'];
        // A what-if GPU is its preset with the factors in their inputs.
        const whatIf = f.path === 'hardware' && WhatIf.is(value);
        const named = whatIf ? value.preset : value;
        const presetId = typeof named === 'string' ? (presetIdFor(list, named) ?? named) : null;
        if (f.path === 'hardware') this.whatIf.set(whatIf ? value.scale : {});
        if (presetId !== null && [...input.options].some((o) => o.value === presetId)) {
          input.value = presetId;
          this.lastPreset[f.path] = presetId; // what a custom box starts from
        } else if (isPlainObject(value)) {
          input.value = CUSTOM;
          $(`${id}-custom`).value = JSON.stringify(value, null, 2);
        } else if (typeof named === 'string') {
          problems.push({ path, message: `${path}: unknown preset ${JSON.stringify(named)}` });
        } else {
          problems.push({ path, message: `${path}: expected a preset id or an object` });
        }
        $(`${id}-custom-box`).hidden = input.value !== CUSTOM;
        if (f.path === 'hardware') this.whatIf.show(input.value !== CUSTOM);
      } else if (f.kind === 'bool') {
        if (typeof value !== 'boolean')
          problems.push({ path, message: `${path}: must be true or false (got ${JSON.stringify(value)})` });
        else if (input.type === 'checkbox') input.checked = value;
        else input.value = value ? 'true' : ''; // a select of '' (no) and 'true'
      } else if (f.kind === 'choice' || f.kind === 'pick') {
        // A pick's '' option leaves the key out; `unset` names the value that means the same.
        const v =
          f.kind !== 'pick'
            ? String(value)
            : 'unset' in f && value === f.unset
              ? ''
              : `${path}=${JSON.stringify(value)}`;
        if ([...input.options].some((o) => o.value === v)) input.value = v;
        else
          problems.push({
            path,
            message: `${path}: not one of the choices offered here (got ${JSON.stringify(value)})`,
          });
      } else {
        input.value = String(value);
      }
    }
    return problems;
  }

  /** Sets the inputs to `defaults`, with the first preset where the default model or GPU is missing. */
  reset(defaults) {
    const def = clone(defaults);
    for (const [k, list] of [
      ['model', 'models'],
      ['hardware', 'hardware'],
    ]) {
      if (!this.presets[list].some((p) => p.id === def[k]) && this.presets[list].length)
        def[k] = this.presets[list][0].id;
    }
    this.clearOptional();
    this.apply(def);
  }

  /** Applies a link's request: {linkErrors, general}, its problems beside their inputs or general.
   *  With `keepFirst` an input keeps the first problem found for it, else the last. */
  applyLink(request, keepFirst = false) {
    const linkErrors = new Map();
    const general = [];
    for (const p of this.apply(request)) {
      const t = this.target(p.path);
      if (t === 'general') general.push(`From the link: ${p.message}`);
      else if (!keepFirst || !linkErrors.has(t)) linkErrors.set(t, p.message);
    }
    return { linkErrors, general };
  }

  /** The module's estimate for `request`, or null with its error put into `errors` (beside its
   *  input; with `keepFirst` not over an input's earlier message) or `general`. */
  estimate(request, errors, general, keepFirst = false) {
    const r = call(this.M, 'estimate', JSON.stringify(request));
    if (r.ok) return r.result;
    const t = this.target(r.error.path);
    if (t === 'general') general.push(r.error.message);
    else if (!keepFirst || !errors.has(t)) errors.set(t, r.error.message);
    return null;
  }

  /** Empties optional inputs, so that applying a request sets exactly what it holds. */
  clearOptional() {
    for (const f of this.fields) if (f.optional) $(this.id(f)).value = '';
  }

  /** The id of the input that owns a request path, or 'general'. */
  target(path) {
    const p = String(path || '');
    // A field's own paths first, so that `owns: ['parallelism']` takes only what no field sets.
    const own = (f) => (f.kind === 'pick' ? [...new Set(f.choices.map(([v]) => v.split('=')[0]))] : [f.path]);
    for (const paths of [own, (f) => f.owns || []]) {
      for (const f of this.fields) {
        const id = this.id(f);
        for (const fp of paths(f)) {
          if (p === fp || p.startsWith(`${fp}.`) || p.startsWith(`${fp}[`)) {
            if (f.kind !== 'spec' || $(id).value !== CUSTOM) return this.whatIf?.target(p) ?? id;
            return (f.path === 'model' && this.modelFields.target(p)) || `${id}-custom`;
          }
        }
      }
    }
    return 'general';
  }

  /** Shows messages (Map id -> text) beside their inputs; the rest in the view's banner. */
  showErrors(messages, general) {
    const ids = [...this.byId.keys()].flatMap((id) =>
      this.byId.get(id).kind === 'spec' ? [id, `${id}-custom`] : [id],
    );
    if (this.modelFields) ids.push(...this.modelFields.ids());
    if (this.whatIf) ids.push(...this.whatIf.ids());
    for (const id of ids) showFieldError(id, messages.get(id) || '');
    const g = $(this.bannerId);
    g.replaceChildren(...general.map((m) => el('p', { text: m })));
    g.hidden = general.length === 0;
    const keys = Object.entries(flatten(this.extras));
    $(this.extrasId).textContent = keys.length
      ? `Also set (no input here): ${keys.map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(', ')}.`
      : '';
  }
}
