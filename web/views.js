// Task tabs (Inference, Training, Serving, Collective) and the links of the training and serving views.
// app.js keeps the inference view; it hands a link to routeLink() first and asks share() before
// sharing its own request. The other views are built the first time they are shown.

import {
  $,
  CUSTOM,
  SCHEMA,
  call,
  cliLine,
  el,
  flatten,
  followLink,
  offer,
  offerRequestLink,
  prewarmWorkers,
} from './ui.js';
import { TrainingView } from './training.js';
import { ServingView } from './serving.js';
import { CollectiveView } from './collective.js';

// Imported up front (no request after load); constructed on first show.
const VIEWS = { training: TrainingView, serving: ServingView, collective: CollectiveView };
const TABS = ['inference', ...Object.keys(VIEWS)];

const ctx = { M: null, presets: null, active: 'inference', views: {} };

// One model and GPU across the tabs: the presets the tab being left shows are the ones the next
// tab opens with (where it offers them; a custom model or GPU stays in its tab).
const FIELD_PREFIX = { inference: '', training: 'tr-', serving: 'sv-', collective: 'co-' };
const SHARED_FIELDS = ['model', 'hardware'];

function selectionOf(name) {
  const selection = {};
  for (const key of SHARED_FIELDS) {
    const select = document.getElementById(FIELD_PREFIX[name] + key);
    if (select && select.value && select.value !== CUSTOM) selection[key] = select.value;
  }
  return selection;
}

/** Puts `selection` into the tab's model and GPU selects as an edit would (an input event). */
function carrySelection(name, selection) {
  for (const [key, value] of Object.entries(selection)) {
    const select = document.getElementById(FIELD_PREFIX[name] + key);
    if (!select || select.value === value || ![...select.options].some((o) => o.value === value)) continue;
    select.value = value;
    select.dispatchEvent(new Event('input', { bubbles: true }));
  }
}

export function init({ M, presets, wasmModule, followInference }) {
  Object.assign(ctx, { M, presets, followInference });
  prewarmWorkers(wasmModule);
  for (const name of TABS) {
    const tab = $(`tab-${name}`);
    tab.disabled = false;
    tab.addEventListener('click', () => show(name));
    // The WAI-ARIA tabs pattern: arrows move to the neighbouring tab (wrapping), Home and End to
    // the first and the last.
    tab.addEventListener('keydown', (e) => {
      const at = TABS.indexOf(name);
      const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: TABS.length - 1 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      const next = TABS[(to + TABS.length) % TABS.length];
      show(next);
      $(`tab-${next}`).focus();
    });
  }
  // Test and console hooks, like window.flopcast for the inference view.
  window.flopcastViews = Object.freeze({
    active: () => ctx.active,
    show,
    request: (name) => ctx.views[name]?.request ?? null,
    lastResult: (name) => ctx.views[name]?.result ?? null,
  });
}

/** Shows one task's view, building it on first use. */
export function show(name) {
  if (!TABS.includes(name)) return null;
  // The inference view disables Share while its inputs are invalid; the other views never do.
  const share = $('share-button');
  const carried = name !== ctx.active ? selectionOf(ctx.active) : {};
  if (name !== ctx.active) {
    if (ctx.active === 'inference') ctx.inferenceShareDisabled = share.disabled;
    share.disabled = name === 'inference' ? Boolean(ctx.inferenceShareDisabled) : false;
  }
  ctx.active = name;
  document.body.dataset.task = name;
  for (const t of TABS) {
    $(`tab-${t}`).setAttribute('aria-selected', String(t === name));
    $(`tab-${t}`).tabIndex = t === name ? 0 : -1;
    $(`view-${t}`).hidden = t !== name;
  }
  $('share-url').hidden = true;
  $('share-status').textContent = '';
  if (name === 'inference') {
    carrySelection(name, carried);
    ctx.followInference?.();
    return null;
  }
  if (!ctx.views[name]) {
    ctx.views[name] = new VIEWS[name]($(`view-${name}`), ctx);
    ctx.views[name].recompute();
  }
  carrySelection(name, carried);
  if (ctx.views[name].root.dataset.status === 'ready') followLink(ctx.M, ctx.views[name].request);
  return ctx.views[name];
}

/**
 * Decodes a link (URL fragment) with the module's codec (core/io/src/link.cpp, every task's
 * links): call()'s {ok, result: {request, errors}}. A link longer than the module reads is
 * refused here with the module's words, without copying it into the module.
 */
function decodeLink(fragment) {
  const max = SCHEMA.limits?.request_bytes;
  if (max !== undefined && fragment.length > max) {
    const message = `link: ${fragment.length} characters, more than the ${max} a link may have`;
    return { ok: true, result: { request: {}, errors: [{ path: '', message }] } };
  }
  return call(ctx.M, 'decode_link', fragment);
}

/**
 * A link for the training, serving or collective view: shows that view with the link's request
 * and returns null. Any other link is the inference view's: shows it and returns the decoded
 * link (decodeLink) for it to apply.
 */
export function routeLink(fragment) {
  const r = decodeLink(fragment);
  const task = r.ok ? r.result.request.task : null;
  if (typeof task !== 'string' || !VIEWS[task]) {
    show('inference');
    return r;
  }
  const view = show(task);
  view.applyRequest(r.result.request);
  const problems = r.result.errors.map((e) => e.message);
  if (problems.length) {
    view.general.push(...problems.map((p) => `From the link: ${p}`));
    view.recompute();
  }
  return null;
}

/** Shares the active view's request when it is not the inference view; returns whether it did. */
export function share() {
  const view = ctx.views[ctx.active];
  if (ctx.active === 'inference' || !view) return false;
  shareRequest(view.request);
  return true;
}

/** Offers the link of a request and puts it in the address bar, so that a reload or a bookmark
 *  keeps the setup and its tab (replaceState: no hashchange, no history entry). */
export function shareRequest(request) {
  const fragment = offerRequestLink(ctx.M, request);
  if (fragment !== null) history.replaceState(null, '', `#${fragment}`);
}

/**
 * Export of the result on screen (`inferenceResult()` gives the inference view's): `cli`, the
 * command that reproduces it (its own resolved request piped to `flopcast estimate`); `request`,
 * that request as a JSON file; `result`, the result as a JSON file; `csv`, the result as one CSV
 * table (resultCsv). Files are data: URLs, so nothing is fetched.
 */
export function exportActive(kind, inferenceResult) {
  const result = ctx.active === 'inference' ? inferenceResult() : ctx.views[ctx.active]?.result;
  const status = $('share-status');
  if (!result) {
    status.className = 'share-status bad';
    status.textContent = 'Nothing to export yet: fix the highlighted fields.';
    return;
  }
  const request = result.request;
  if (kind === 'cli') {
    offer(cliLine(request), 'Command ready');
    return;
  }
  const csv = kind === 'csv';
  const name = `flopcast-${result.task ?? ctx.active}-${csv ? 'result.csv' : `${kind}.json`}`;
  const text = csv ? resultCsv(result) : JSON.stringify(kind === 'request' ? request : result, null, 2);
  const a = el('a', {
    href: `data:${csv ? 'text/csv' : 'application/json'};charset=utf-8,${encodeURIComponent(text)}`,
    download: name,
  });
  document.body.append(a);
  a.click();
  a.remove();
  status.className = 'share-status';
  status.textContent = `Saved ${name}`;
}

/** A CSV cell: quoted when it holds a comma, quote or line break; text a spreadsheet would run
 * as a formula (=, +, -, @ first, not a number) gets a leading apostrophe. */
function csvCell(v) {
  if (v === null || v === undefined) return '';
  let s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (/^[=+\-@]/.test(s) && !(typeof v === 'number')) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/**
 * The result as one CSV table: the per-op breakdown (one row per op and phase) when the result
 * has one (inference, training), else every scalar field as `field,value` (dotted paths).
 */
export function resultCsv(result) {
  const rows = Array.isArray(result.breakdown) && result.breakdown.length ? result.breakdown : null;
  if (rows) {
    const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    return (
      [columns, ...rows.map((r) => columns.map((c) => r[c]))].map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n'
    );
  }
  const fields = Object.entries(flatten(result)).filter(
    ([k, v]) => k !== 'request' && !k.startsWith('request.') && !Array.isArray(v),
  );
  return [['field', 'value'], ...fields].map((r) => r.map(csvCell).join(',')).join('\r\n') + '\r\n';
}
