// The model editor: the keys of a flopcast model object (docs/schema.md, "Model object": shape,
// attention pattern, latent attention, MoE, the checkpoint's published types) as form
// fields under its JSON box. The box stays the one source of the model: a field writes its key
// into the object in the box (empty leaves the key out, so its default applies) and the view
// recomputes as if the box had been edited; links, pastes and drops keep working unchanged. The
// core validates every value, and its error for `model.<key>` is shown beside that key's field.

import { WEIGHT_TYPES, el, field, schemaList, select } from './ui.js';

// [key, label, default shown as the placeholder, choices (a select) or undefined (an integer)]
const GROUPS = [
  [
    'Shape',
    [
      ['num_layers', 'Layers'],
      ['hidden_size', 'Hidden size'],
      ['num_heads', 'Attention heads'],
      ['num_kv_heads', 'KV heads', '= heads'],
      ['head_dim', 'Head dim', 'hidden / heads'],
      ['intermediate_size', 'FFN width (one routed expert’s for MoE)'],
      ['vocab_size', 'Vocabulary'],
      ['max_context_tokens', 'Longest context (tokens)'],
      [
        'ffn',
        'FFN',
        '',
        [
          ['', 'gated (default)'],
          ['plain', 'plain (up, down)'],
        ],
      ],
    ],
  ],
  [
    'Checkpoint (the default precision)',
    [
      // The weight types come from the module (ui.js, loadSchema): read when the editor is built.
      [
        'checkpoint_weights',
        'Published weights',
        '',
        () => [['', 'not stated (bf16)'], ...WEIGHT_TYPES.map((t) => [t, t])],
      ],
      [
        'checkpoint_attention_weights',
        'Published attention weights',
        '',
        () => [['', 'as the weights'], ...schemaList('precision', 'attention_weights').map((t) => [t, t])],
      ],
      [
        'checkpoint_weight_scaling',
        'FP8 scales',
        '',
        [
          ['', 'per tensor'],
          ['block', 'per 128x128 block (DeepSeek, Kimi K2, Qwen3 FP8)'],
        ],
      ],
    ],
  ],
  [
    'Attention pattern',
    [
      ['sliding_window_tokens', 'Local window W (tokens)', 'none: full attention'],
      [
        'local_attention',
        'Local attention',
        '',
        [
          ['', 'sliding (default)'],
          ['chunked', 'chunked (Llama 4)'],
        ],
      ],
      ['global_attention_every', 'Every n-th layer global', '0: all local'],
    ],
  ],
  [
    'Multi-head latent attention (DeepSeek)',
    [
      ['kv_lora_rank', 'KV latent rank', '0: off'],
      ['q_lora_rank', 'Query latent rank', '0'],
      ['qk_rope_head_dim', 'RoPE head dim', '0'],
      ['qk_nope_head_dim', 'No-RoPE head dim', '0'],
      ['v_head_dim', 'Value head dim', '0'],
    ],
  ],
  [
    'Mixture of experts',
    [
      ['num_experts', 'Routed experts', '0: dense'],
      ['experts_per_token', 'Experts per token (top-k)', '0'],
      ['shared_experts', 'Shared experts', '0'],
      ['shared_expert_intermediate_size', 'Shared expert width', '= FFN width'],
      ['first_dense_layers', 'Leading dense layers', '0'],
      ['moe_layer_interval', 'MoE every n-th layer', '1'],
      ['expert_groups', 'Expert groups (routing)', '0: no limit'],
      ['expert_groups_per_token', 'Groups a token routes to', '0: no limit'],
      ['moe_latent_size', 'Expert latent width (LatentMoE)', '0: hidden size'],
      ['dense_intermediate_size', 'Dense layers’ FFN width', '= FFN width'],
      ['mtp_layers', 'Multi-token-prediction layers', '0'],
    ],
  ],
];
const KEYS = new Set(GROUPS.flatMap(([, fields]) => fields.map(([key]) => key)));

export class ModelFields {
  /** `textarea`: the model's JSON box; `read()`: its model object as {value} or {error} (a
   *  Hugging Face config converted). The editor goes at the end of the box's field, so that it
   *  shows and hides with the box. */
  constructor(textarea, read) {
    Object.assign(this, { textarea, read, prefix: `${textarea.id}-f` });
    this.details = el(
      'details',
      { class: 'model-fields' },
      el('summary', { text: 'Edit as fields' }),
      el('p', {
        class: 'hint',
        text: 'Each field writes its key into the model object above; empty leaves the key to its default.',
      }),
      ...GROUPS.map(([legend, fields]) =>
        el(
          'fieldset',
          null,
          el('legend', { text: legend }),
          el('div', { class: 'row' }, ...fields.map((f) => this.render(...f))),
        ),
      ),
    );
    textarea.parentElement.append(this.details);
    this.details.addEventListener('toggle', () => {
      if (this.details.open) this.sync();
    });
  }

  id(key) {
    return `${this.prefix}-${key}`;
  }

  /** The ids errors can be shown beside (each has its err-<id> box). */
  ids() {
    return [...KEYS].map((k) => this.id(k));
  }

  render(key, label, placeholder, choices) {
    const control = choices
      ? select(typeof choices === 'function' ? choices() : choices)
      : el('input', { type: 'text', inputmode: 'numeric', placeholder: placeholder || '', autocomplete: 'off' });
    control.addEventListener('input', (e) => {
      e.stopPropagation(); // the box's own input event below is the one the view hears
      this.write(key, control.value.trim(), !choices);
    });
    return field(this.id(key), label, control);
  }

  /** Writes one key into the box's object and tells the view the box changed. */
  write(key, raw, numeric) {
    const r = this.read();
    if (r.error) return; // the box's own error says what to fix first
    const obj = r.value;
    if (raw === '') delete obj[key];
    // A number where it is one; anything else goes in as typed and the core names the rule.
    else obj[key] = numeric && raw !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
    this.textarea.value = JSON.stringify(obj, null, 2);
    this.textarea.dispatchEvent(new Event('input', { bubbles: true }));
  }

  /** Shows the values of `model` (default: the box's) in the fields, except the one being typed in. */
  sync(model) {
    const obj = model || this.read().value;
    if (!obj || !this.details.open) return;
    for (const key of KEYS) {
      const input = document.getElementById(this.id(key));
      if (input === document.activeElement) continue;
      const v = obj[key];
      input.value = v === undefined || v === null ? '' : String(v);
    }
  }

  /** The field that owns an error's request path (`model.<key>`), or null. */
  target(path) {
    const m = /^model\.([a-z_]+)/.exec(String(path || ''));
    return m && KEYS.has(m[1]) && this.details.open ? this.id(m[1]) : null;
  }
}
