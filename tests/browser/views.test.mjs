// Browser tests of the training and serving views (web/training.js, web/serving.js,
// web/sim-worker.js) against the real WebAssembly module.
//
//   FLOPCAST_SITE_DIR=build/wasm-release/site node --test tests/browser/views.test.mjs
//
// Same harness rules as page.test.mjs: web/serve.mjs on a free port, the system Chromium through
// playwright-core, and failure on any console error, page error, failed request or request to a
// host other than localhost.

import { test, before, after } from 'node:test';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { LOCAL_HOSTS, settle, shot, startSite } from './harness.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

let site;
let baseUrl;
let browser;

before(async () => {
  site = await startSite([
    'index.html',
    'app.js',
    'views.js',
    'training.js',
    'serving.js',
    'sim-worker.js',
    'model-fields.js',
    'flopcast.mjs',
    'flopcast.wasm',
  ]);
  ({ baseUrl, browser } = site);
});

after(async () => {
  if (site) await site.close();
});

async function openPage(hash = '', viewport = { width: 1400, height: 1000 }) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = [];
  const requests = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console error: ${msg.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  // Worker requests reach the context, not the page.
  context.on('request', (req) => {
    const u = new URL(req.url());
    requests.push(req.url());
    if (u.protocol !== 'data:' && !LOCAL_HOSTS.has(u.hostname))
      problems.push(`request to a non-local host: ${req.url()}`);
  });
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()} (${req.failure()?.errorText})`));
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()} for ${res.url()}`);
  });
  await page.goto(baseUrl + (hash ? `#${hash}` : ''));
  await page.waitForFunction(
    () => window.flopcastViews !== undefined || document.documentElement.dataset.status === 'error',
    null,
    { timeout: 15000 },
  );
  return {
    page,
    requests,
    async done() {
      await context.close();
      assert.deepEqual(problems, [], 'the page reported problems');
    },
  };
}

const viewStatus = (page, name) => page.evaluate((n) => document.getElementById(`view-${n}`).dataset.status, name);
const fieldError = (page, id) => page.evaluate((i) => document.getElementById(`err-${i}`).textContent.trim(), id);
const value = (page, id) => page.evaluate((i) => Number(document.getElementById(i).dataset.value), id);
const viewRequest = (page, name) => page.evaluate((n) => window.flopcastViews.request(n), name);
const viewResult = (page, name) => page.evaluate((n) => window.flopcastViews.lastResult(n), name);
/** The module's answer to the training search of the view's setup: its layout, recomputation
 *  and micro-batch left to the search, and its compute type when `search.compute` lists them. */
async function trainingSearch(page, search = {}) {
  const q = await viewRequest(page, 'training');
  delete q.parallelism;
  delete q.workload.recompute;
  delete q.workload.micro_batch_size;
  if (search.compute) delete q.precision.compute;
  const env = await estimate(page, { ...q, task: 'search', search: { target: 'training', top: 10, ...search } });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  return env.result;
}
/** The texts under `header` in view P's search table, row by row. */
const searchColumn = (page, P, header) =>
  page.evaluate(
    ([p, h]) => {
      const column = [...document.querySelectorAll(`#${p}-search-table thead th`)].findIndex(
        (th) => th.textContent === h,
      );
      return [...document.querySelectorAll(`#${p}-search-table tbody tr`)].map(
        (tr) => tr.children[column]?.textContent,
      );
    },
    [P, header],
  );
const estimate = (page, request) =>
  page.evaluate((r) => JSON.parse(window.flopcast.module.estimate(JSON.stringify(r))), request);

async function openTab(page, name) {
  await page.click(`#tab-${name}`);
  await page.waitForFunction(
    (n) => ['ready', 'stale'].includes(document.getElementById(`view-${n}`).dataset.status),
    name,
  );
}

// The numbers on screen equal the module's answer to the request the view built.
async function checkTraining(page, label) {
  const req = await viewRequest(page, 'training');
  const env = await estimate(page, req);
  assert.equal(env.ok, true, `${label}: module ok (${JSON.stringify(env.error)})`);
  const r = env.result;
  assert.deepEqual(await viewResult(page, 'training'), r, `${label}: the view's result is the module's`);
  for (const [id, key] of [
    ['tr-step', 'step_time_s'],
    ['tr-tps', 'tokens_per_s'],
    ['tr-tpsg', 'tokens_per_s_per_gpu'],
    ['tr-mfu', 'mfu'],
    ['tr-hfu', 'hfu'],
    ['tr-total', 'total_time_s'],
    ['tr-gpuh', 'gpu_hours'],
  ]) {
    assert.equal(await value(page, id), r[key], `${label}: ${key}`);
  }
  const shown = await page.evaluate(() => ({
    rows: document.querySelectorAll('#tr-table tbody tr').length,
    bars: document.querySelectorAll('#tr-chart rect.bar').length,
    phases: [...document.querySelectorAll('#tr-phases .phase-seg')].map((e) => e.dataset.phase),
    weights: document.querySelector('#tr-memory-legend li[data-part="weights_GB"] .legend-value').textContent,
    fits: document.getElementById('tr-fits').dataset.fits,
    mfuText: document.getElementById('tr-mfu').textContent,
  }));
  assert.equal(shown.rows, r.breakdown.length, `${label}: one table row per breakdown entry`);
  assert.equal(shown.bars, r.breakdown.length, `${label}: one bar per breakdown entry`);
  assert.deepEqual(new Set(shown.phases), new Set(r.breakdown.map((b) => b.phase)), `${label}: phases`);
  assert.equal(shown.fits, String(r.memory_per_gpu.fits), `${label}: fits badge`);
  assert.match(shown.weights, /GB$/);
  assert.equal(shown.mfuText, `${(r.mfu * 100).toFixed(1)}%`, `${label}: MFU text`);
  return r;
}

// ------------------------------------------------------------------ training

test('training view: numbers equal the module result, recomputed on each input', async () => {
  const p = await openPage();
  const { page } = p;
  assert.equal(await page.evaluate(() => window.flopcastViews.active()), 'inference');
  await openTab(page, 'training');
  assert.equal(await viewStatus(page, 'training'), 'ready');
  assert.equal(await page.isVisible('#view-inference'), false);
  const r0 = await checkTraining(page, 'default');
  // The default leaves the micro-batch to the search.
  assert.equal((await viewRequest(page, 'training')).workload.micro_batch_size, undefined);
  assert.equal(r0.micro_batch_searched, true);

  await page.fill('#tr-num_gpus', '16');
  await page.fill('#tr-seq_len', '2048');
  await page.fill('#tr-micro_batch_size', '1');
  await page.selectOption('#tr-recompute', 'full');
  await page.selectOption('#tr-sharding', 'parallelism.zero=1');
  await page.fill('#tr-cost', '2.5');
  const req = await viewRequest(page, 'training');
  assert.equal(req.num_gpus, 16);
  assert.deepEqual(req.parallelism, {
    tp: 1,
    pp: 1,
    cp: 1,
    ep: 1,
    vpp: 1,
    sp: false,
    tp_comm_overlap: false,
    ep_comm_overlap: false,
    zero: 1,
  });
  assert.equal(req.workload.micro_batch_size, 1);
  assert.equal(req.workload.recompute, 'full');
  const r1 = await checkTraining(page, 'edited');
  assert.equal(r1.micro_batch_size, 1);
  assert.ok(r1.hfu > r1.mfu, 'full recomputation: HFU above MFU');
  assert.ok(r1.cost_usd > 0, 'cost shown with a $/GPU-hour');
  // The price typed ($2.50) prices the run: GPU-hours × 2.5, said beside the cost.
  assert.ok(Math.abs(r1.cost_usd - 2.5 * r1.gpu_hours) < 1e-3 * r1.cost_usd);
  assert.equal(r1.cost_basis.usd_per_gpu_hour, 2.5);
  assert.match(await page.textContent('#tr-gpuh-sub'), /at \$2\.50\/GPU·h/);
  await shot(page, 'training');
  await p.done();
});

// Issue 10: the Training (and Serving) view's custom model has the same field editor as the
// Inference tab, its errors beside the field.
test('training view: the model editor edits the custom model, errors beside the field', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'training');
  const before = await checkTraining(page, 'preset');
  await page.selectOption('#tr-model', '__custom__');
  await page.click('#tr-model-custom-box details.model-fields > summary');
  // The fields fill when the editor opens (its toggle event).
  await page.waitForFunction(() => document.getElementById('tr-model-custom-f-num_layers').value !== '');
  assert.equal(await page.inputValue('#tr-model-custom-f-num_layers'), '32');
  // Half the layers: the step is priced on 16 layers of the same shape (the same embedding
  // and LM head), so it takes more than half and less than all of the 32-layer step.
  await page.fill('#tr-model-custom-f-num_layers', '16');
  assert.equal((await viewRequest(page, 'training')).model.num_layers, 16);
  const half = await checkTraining(page, '16 layers');
  assert.ok(
    half.step_time_s > 0.5 * before.step_time_s && half.step_time_s < 0.56 * before.step_time_s,
    `16 layers: ${half.step_time_s} s vs ${before.step_time_s} s`,
  );
  await page.fill('#tr-model-custom-f-num_heads', '0');
  await page.waitForFunction(() => document.getElementById('view-training').dataset.status === 'stale');
  assert.match(
    await fieldError(page, 'tr-model-custom-f-num_heads'),
    /^model\.num_heads: must be between 1 and 100000 \(got 0\)$/,
  );
  assert.equal(await fieldError(page, 'tr-model-custom'), '');
  await p.done();
});

// Issue 11: every tab's form is form.js, so the Serving and Training tabs' custom model takes a
// dropped Hugging Face config.json as the Inference tab does: converted by the module, named
// after the file when the config holds no name, with a line saying what it became.
test('serving view: a dropped Hugging Face config.json becomes the custom model, with its summary', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'serving');
  await page.selectOption('#sv-model', '__custom__');
  // Qwen3-8B's config.json as published (tests/fixtures/hf): 36 layers, hidden 4096, 32 heads,
  // 8 KV heads, no _name_or_path (so the file names the model).
  const config = readFileSync(path.join(repoRoot, 'tests/fixtures/hf/qwen3-8b.json'), 'utf8');
  await page.evaluate((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'qwen3-8b.json', { type: 'application/json' }));
    const ta = document.getElementById('sv-model-custom');
    ta.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, config);
  await page.waitForFunction(() => window.flopcastViews.request('serving').model?.name === 'qwen3-8b');
  const model = (await viewRequest(page, 'serving')).model;
  assert.equal(model.num_layers, 36);
  assert.equal(model.num_kv_heads, 8);
  assert.equal(await fieldError(page, 'sv-model-custom'), '');
  assert.equal(
    await page.textContent('#sv-model-custom-info'),
    'Converted from a Hugging Face config.json (qwen3-8b): 36 layers, hidden size 4096, 32 heads / 8 KV heads.',
  );
  assert.equal(await viewStatus(page, 'serving'), 'ready');
  await p.done();
});

// Issue 11: Llama-3.1-405B in plain DDP on 8 H100 showed MFU 76 %, 48.6 days and 9,324 GPU-hours
// with "Does not fit" below the fold. The verdict and what would make it fit replace the headline.
test('training view: a step that does not fit shows the verdict instead of headline numbers', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'training');
  await page.selectOption('#tr-model', 'llama-3.1-405b');
  await page.selectOption('#tr-hardware', 'h100-sxm');
  await page.fill('#tr-num_gpus', '8');
  await page.selectOption('#tr-sharding', 'parallelism.zero=0');
  const r = await viewResult(page, 'training');
  assert.equal(r.memory_per_gpu.fits, false);
  const seen = await page.evaluate(() => ({
    headline: document.getElementById('tr-headline').hidden,
    verdict: document.getElementById('tr-unfit').hidden,
    text: document.getElementById('tr-unfit').textContent,
  }));
  assert.equal(seen.headline, true, 'headline numbers hidden');
  assert.equal(seen.verdict, false, 'verdict shown');
  assert.match(seen.text, /^Does not fit: a GPU needs [0-9,.]+ (GB|TB) of its 85\.1 GB, so no step time is shown\./);
  assert.match(seen.text, /FSDP full_shard or ZeRO-3/);
  // Llama-3.1-8B sharded with FSDP fits, and the numbers come back.
  await page.selectOption('#tr-model', 'llama-3.1-8b');
  await page.selectOption('#tr-sharding', 'parallelism.fsdp="full_shard"');
  assert.equal((await viewResult(page, 'training')).memory_per_gpu.fits, true);
  assert.equal(await page.evaluate(() => document.getElementById('tr-headline').hidden), false);
  assert.equal(await page.evaluate(() => document.getElementById('tr-unfit').hidden), true);
  await p.done();
});

/** Waits for the search of panel `P` (run in its worker) to finish. */
async function searchDone(page, P) {
  await page.waitForFunction((id) => document.getElementById(id).dataset.state === 'done', `${P}-search`, {
    timeout: 60000,
  });
}

// Issue 14: the fastest layouts of the setup, each one click from the form.
test('training view: layout search lists the fastest layouts and Use loads one', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'training');
  await page.fill('#tr-num_gpus', '16');
  await page.click('#tr-search-run');
  await searchDone(page, 'tr');
  const rows = await page.evaluate(() =>
    [...document.querySelectorAll('#tr-search-table tbody tr')].map((tr) => ({
      cells: [...tr.children].map((td) => td.textContent),
      step: Number(tr.querySelector('[data-value]').dataset.value),
    })),
  );
  // The table is the module's answer to the search request of this setup.
  const res = await trainingSearch(page);
  assert.equal(rows.length, res.candidates.length);
  assert.ok(rows.length >= 2 && rows.length <= 10);
  rows.forEach((r, i) => {
    assert.equal(r.step, res.candidates[i].step_time_s, `row ${i + 1}: step time`);
    assert.equal(r.cells[1], String(res.candidates[i].parallelism.tp), `row ${i + 1}: tp`);
    if (i > 0) assert.ok(r.step >= rows[i - 1].step, 'fastest first');
  });
  const note = await page.evaluate(() => document.getElementById('tr-search-note').textContent);
  assert.match(
    note,
    new RegExp(
      `^${res.evaluated.toLocaleString('en-US')} layouts considered, ${res.fitting.toLocaleString('en-US')} fit ` +
        `\\(${res.micro_batches_priced.toLocaleString('en-US')} micro-batch sizes priced\\)\\.`,
    ),
  );
  // Link and CLI: each row's own request, as the page's link and as the command that prices it.
  await page.click('#tr-search-table button[data-rank="3"][data-action="Link"]');
  const url = new URL(await page.evaluate(() => document.getElementById('share-url').value));
  const linked = await openPage(url.hash.slice(1));
  await linked.page.waitForFunction(() => document.getElementById('view-training').dataset.status === 'ready');
  assert.equal((await viewResult(linked.page, 'training')).step_time_s, res.candidates[2].step_time_s);
  await linked.done();
  await page.click('#tr-search-table button[data-rank="3"][data-action="CLI"]');
  const cli = await page.evaluate(() => document.getElementById('share-url').value);
  const m = cli.match(/^echo '(.*)' \| flopcast estimate --request - --format json$/);
  assert.ok(m, cli);
  assert.deepEqual(JSON.parse(m[1]), res.candidates[2].request);
  // Use: the second layout goes into the form, and the estimate is that layout's.
  const second = res.candidates[1];
  await page.click('#tr-search-table button[data-rank="2"][data-action="Use"]');
  const req = await viewRequest(page, 'training');
  for (const k of ['tp', 'pp', 'vpp', 'dp', 'cp', 'ep', 'zero'])
    assert.equal(req.parallelism[k], second.parallelism[k], k);
  assert.equal(req.workload.recompute, second.recompute);
  assert.equal(req.workload.micro_batch_size, second.micro_batch_size);
  assert.equal((await viewResult(page, 'training')).step_time_s, second.step_time_s);
  assert.equal(await page.evaluate(() => document.getElementById('tr-search-table').dataset.stale), 'false');
  // Another sequence length: the search no longer describes the setup.
  await page.fill('#tr-seq_len', '2048');
  assert.equal(await page.evaluate(() => document.getElementById('tr-search-table').dataset.stale), 'true');
  await shot(page, 'training-search');
  await p.done();
});

// Issue 14: virtual pipeline stages in the layout search. Llama-3.1-70B on 64 H100 (80 layers):
// PP 2 layouts come with 1, 2, 4, 5 or 8 virtual stages, and one of them ranks in the top ten;
// Use loads its PP and virtual stages together (PP first would reset the stages to 1).
test('training view: a searched layout with virtual stages loads with them', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'training');
  await page.selectOption('#tr-model', 'llama-3.1-70b');
  await page.fill('#tr-num_gpus', '64');
  await page.click('#tr-search-run');
  await searchDone(page, 'tr');
  const res = await trainingSearch(page);
  const rank = res.candidates.findIndex((c) => c.parallelism.vpp > 1) + 1;
  assert.ok(rank > 0, 'a layout with virtual stages is among the ten fastest');
  const chosen = res.candidates[rank - 1];
  assert.equal((await searchColumn(page, 'tr', 'VPP'))[rank - 1], String(chosen.parallelism.vpp));
  await page.click(`#tr-search-table button[data-rank="${rank}"][data-action="Use"]`);
  const req = await viewRequest(page, 'training');
  assert.equal(req.parallelism.pp, chosen.parallelism.pp);
  assert.equal(req.parallelism.vpp, chosen.parallelism.vpp);
  assert.equal((await viewResult(page, 'training')).step_time_s, chosen.step_time_s);
  await p.done();
});

// Issue 14: the compute type as a search dimension on the page. On 8 B200 the box adds the
// types the GPU runs (bf16, fp8, mxfp8, fp4); the table shows each row's type and Use loads it.
test('training view: the layout search can try the compute types the GPU has', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'training');
  await page.selectOption('#tr-hardware', 'b200');
  await page.fill('#tr-num_gpus', '8');
  await page.check('#tr-search-compute');
  await page.click('#tr-search-run');
  await searchDone(page, 'tr');
  const res = await trainingSearch(page, { compute: ['bf16', 'fp8', 'mxfp8', 'fp4'] });
  const shown = await searchColumn(page, 'tr', 'Compute');
  assert.deepEqual(
    shown,
    res.candidates.map((c) => c.compute),
  );
  // On Blackwell the FP4 tensor cores (4x the bf16 peak) win for an 8B model.
  assert.equal(shown[0], 'fp4');
  await page.click('#tr-search-table button[data-rank="1"][data-action="Use"]');
  assert.equal((await viewRequest(page, 'training')).precision.compute, res.candidates[0].compute);
  assert.equal((await viewResult(page, 'training')).step_time_s, res.candidates[0].step_time_s);
  await p.done();
});

// Issue 44: a search too large to price is refused with a way on: the sizes boxes pin TP, PP, CP
// and EP. DeepSeek-V3 on 2,048 H100 with both compute types is 34,560 layouts (over 20,000);
// CP pinned to 1 leaves a quarter of them (cp tried 1, 2, 4, 8), and every row has CP 1.
test('training view: the sizes boxes pin a search that is too large to run', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'training');
  await page.selectOption('#tr-model', 'deepseek-v3');
  await page.selectOption('#tr-hardware', 'h100-sxm');
  await page.fill('#tr-num_gpus', '2048');
  await page.check('#tr-search-compute');
  await page.click('#tr-search-run');
  await page.waitForFunction(() => document.getElementById('tr-search').dataset.state === 'error', null, {
    timeout: 60000,
  });
  assert.match(
    await page.textContent('#tr-search-note'),
    /^This search would price more than 20,000 layouts: pin TP, PP, CP or EP .*\(got 34560\)\)$/,
  );
  // A size that is not a whole number is refused beside its box, before any search.
  await page.fill('#tr-search-cp', '1');
  await page.fill('#tr-search-ep', '8, x');
  await page.click('#tr-search-run');
  assert.equal(
    await page.textContent('#err-tr-search-ep'),
    '"x": expected whole numbers >= 1, comma-separated, e.g. 1, 2, 4',
  );
  assert.equal(await page.getAttribute('#tr-search-ep', 'aria-invalid'), 'true');
  assert.equal(await page.textContent('#tr-search-note'), 'Fix the highlighted fields first.');
  await page.fill('#tr-search-ep', '');
  assert.equal(await page.textContent('#err-tr-search-ep'), '');
  await page.click('#tr-search-run');
  await searchDone(page, 'tr');
  const res = await trainingSearch(page, { compute: ['bf16', 'fp8'], cp: [1] });
  assert.ok(res.candidates.length >= 1);
  assert.deepEqual(await searchColumn(page, 'tr', 'Step time').then((c) => c.length), res.candidates.length);
  assert.deepEqual(
    await searchColumn(page, 'tr', 'CP'),
    res.candidates.map(() => '1'),
  );
  assert.ok(res.evaluated <= 20000 && res.evaluated > 0, `${res.evaluated} layouts`);
  // Another pin makes the table stale until searched again.
  await page.fill('#tr-search-tp', '8');
  assert.equal(await page.evaluate(() => document.getElementById('tr-search-table').dataset.stale), 'true');
  await p.done();
});

// Issue 44 item 4: which GPU, how many. Llama-3.1-70B in fp8 at batch 32: every GPU type at the
// smallest TP that fits one node, the module's own answer to the search of the form's request
// (hardware, count, layout and price left to it), cheapest at the band's low edge first; Use loads
// a row, and the inference estimate on screen is that row's.
test('inference view: Compare GPUs lists each GPU type at the smallest TP that fits, and Use loads one', async () => {
  const p = await openPage(
    'v=1&task=inference&model=llama-3.1-70b&hardware=h100-sxm&num_gpus=2&parallelism.tp=2&precision.weights=fp8&workload.prompt_tokens=1000&workload.output_tokens=200&workload.batch_size=32',
  );
  const { page } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready', null, { timeout: 15000 });
  await page.click('#gpu-search-run');
  await searchDone(page, 'gpu');
  const q = await page.evaluate(() => window.flopcast.request());
  for (const key of ['hardware', 'num_gpus', 'parallelism', 'cost_per_gpu_hour_usd']) delete q[key];
  const env = await estimate(page, { ...q, task: 'search', search: { target: 'hardware' } });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  const res = env.result;
  const rows = await page.evaluate(() =>
    [...document.querySelectorAll('#gpu-search-table tbody tr')].map((tr) => ({
      gpu: tr.children[1].dataset.hardware,
      gpus: tr.children[2].textContent,
    })),
  );
  assert.deepEqual(
    rows,
    res.candidates.map((c) => ({ gpu: c.hardware, gpus: String(c.num_gpus) })),
  );
  // One 80 GB H100 leaves the 72.7 GB of weights no KV cache; two do. A 24 GB RTX 4090 node of 4
  // cannot hold the model, and the note says so.
  assert.equal(res.candidates.find((c) => c.hardware === 'h100-sxm').num_gpus, 2);
  assert.match(await page.textContent('#gpu-search-note'), /Not: .*rtx-4090 \(does not fit on one node \(4 GPUs\)\)/);
  // Use: the H200 row (one GPU) becomes the form, and its estimate is the one on screen.
  const rank = res.candidates.findIndex((c) => c.hardware === 'h200-sxm') + 1;
  await page.click(`#gpu-search-table button[data-rank="${rank}"][data-action="Use"]`);
  await page.waitForFunction(() => window.flopcast.request().hardware === 'h200-sxm');
  const req = await page.evaluate(() => window.flopcast.request());
  assert.equal(req.num_gpus, 1);
  assert.equal(req.parallelism.tp, 1);
  const shown = await page.evaluate(() => window.flopcast.lastResult());
  assert.equal(shown.tpot_ms, res.candidates[rank - 1].tpot_ms);
  // Another batch size: the comparison no longer describes the setup.
  await page.fill('#batch_size', '64');
  await page.waitForFunction(() => document.getElementById('gpu-search-table').dataset.stale === 'true');
  await p.done();
});

// Issue 11: export the result on screen as a CLI command, its request and the result as JSON files.
test('export: CLI command, request and result JSON reproduce the numbers on screen', async () => {
  const p = await openPage();
  const { page } = p;
  const { readFile } = await import('node:fs/promises');
  const download = async (kind) => {
    await page.click('#export summary');
    const [file] = await Promise.all([page.waitForEvent('download'), page.click(`#export-${kind}`)]);
    return { name: file.suggestedFilename(), doc: JSON.parse(await readFile(await file.path(), 'utf8')) };
  };
  for (const tab of ['inference', 'training']) {
    if (tab !== 'inference') await openTab(page, tab);
    const shown =
      tab === 'inference' ? await page.evaluate(() => window.flopcast.lastResult()) : await viewResult(page, tab);
    const result = await download('result');
    assert.equal(result.name, `flopcast-${tab}-result.json`);
    assert.deepEqual(result.doc, shown, `${tab}: the result file is the result on screen`);
    const request = await download('request');
    assert.equal(request.name, `flopcast-${tab}-request.json`);
    const again = await estimate(page, request.doc);
    assert.equal(again.ok, true, JSON.stringify(again.error));
    assert.deepEqual(again.result, shown, `${tab}: the request file reproduces the result`);
    // The command pipes that request, single-quoted for the shell, into flopcast estimate.
    await page.click('#export summary');
    await page.click('#export-cli');
    const command = await page.inputValue('#share-url');
    const m = command.match(/^echo '(.*)' \| flopcast estimate --request - --format json$/);
    assert.ok(m, command);
    assert.deepEqual(JSON.parse(m[1].replaceAll("'\\''", "'")), request.doc);
    // CSV: the per-op breakdown, one row per op and phase, columns named by the result's keys.
    await page.click('#export summary');
    const [file] = await Promise.all([page.waitForEvent('download'), page.click('#export-csv')]);
    assert.equal(file.suggestedFilename(), `flopcast-${tab}-result.csv`);
    const lines = (await readFile(await file.path(), 'utf8')).trimEnd().split('\r\n');
    assert.equal(lines.length, shown.breakdown.length + 1);
    const columns = lines[0].split(',');
    assert.ok(columns.includes('op') && columns.includes('time_ms'), lines[0]);
    assert.equal(Number(lines[1].split(',')[columns.indexOf('time_ms')]), shown.breakdown[0].time_ms);
  }
  // Without a breakdown (serving), every scalar field as field,value (the request left out); a
  // cell a spreadsheet would run as a formula is defused, one with a comma or quote is quoted.
  const csv = await page.evaluate(async () =>
    (await import('./views.js')).resultCsv({
      task: 'serving',
      saturation_rate_per_s: 12.5,
      ttft_ms: { p50: 40 },
      note: '=HYPERLINK("x")',
      name: 'a,b',
      request: { a: 1 },
    }),
  );
  assert.equal(
    csv,
    'field,value\r\ntask,serving\r\nsaturation_rate_per_s,12.5\r\nttft_ms.p50,40\r\nnote,"\'=HYPERLINK(""x"")"\r\nname,"a,b"\r\n',
  );
  await p.done();
});

// Issue 11: compare on the Training, Serving and Collective tabs too.
test('training, serving and collective views: a pinned result gives each headline its ratio', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'training');
  const before = await viewResult(page, 'training');
  await page.click('#tr-pin');
  assert.equal(await page.getAttribute('#tr-step-compare', 'data-better'), 'same');
  await page.fill('#tr-num_gpus', '16');
  const after = await viewResult(page, 'training');
  const ratio = async (id) => Number(await page.getAttribute(id, 'data-ratio'));
  assert.equal(await ratio('#tr-step-compare'), after.step_time_s / before.step_time_s);
  assert.equal(await ratio('#tr-tps-compare'), after.tokens_per_s / before.tokens_per_s);
  // Twice the GPUs: more tokens/s in all (better), each GPU a little less busy or the same.
  assert.equal(await page.getAttribute('#tr-tps-compare', 'data-better'), 'true');
  assert.match(await page.textContent('#tr-compare-note'), /^Compared with the pinned setup: Llama 3.1 8B on 8 × /);
  await page.click('#tr-pin');
  assert.equal(await page.isVisible('#tr-step-compare'), false);

  await openTab(page, 'serving');
  const s0 = await viewResult(page, 'serving');
  await page.click('#sv-pin');
  await page.fill('#sv-rate', '20');
  const s1 = await viewResult(page, 'serving');
  assert.equal(await ratio('#sv-tpot-compare'), s1.tpot_ms.p50 / s0.tpot_ms.p50);
  // Twice the load on the same GPU: a longer TPOT (worse), the same saturation rate.
  assert.equal(await page.getAttribute('#sv-tpot-compare', 'data-better'), 'false');
  assert.equal(await page.getAttribute('#sv-sat-compare', 'data-better'), 'same');

  // Collective: 64 MiB all-reduce on 8 H100, pinned, then over 16 ranks (two nodes).
  await openTab(page, 'collective');
  const c0 = await viewResult(page, 'collective');
  await page.click('#co-pin');
  assert.equal(await page.getAttribute('#co-time-compare', 'data-better'), 'same');
  assert.match(
    await page.textContent('#co-compare-note'),
    /^Compared with the pinned setup: all_reduce of 64 MiB over 8 ranks, /,
  );
  await page.fill('#co-ranks', '16');
  const c1 = await viewResult(page, 'collective');
  assert.equal(await ratio('#co-time-compare'), c1.time_us / c0.time_us);
  assert.equal(await ratio('#co-busbw-compare'), c1.bus_bandwidth_GBps / c0.bus_bandwidth_GBps);
  // Crossing to a second node (hierarchical: NVLink inside, 8 NICs between) takes longer (400
  // against 374 us), a worse time; the bus bandwidth stays within 0.5 % (314.6 / 313.9 GB/s).
  assert.ok(c1.time_us > 1.05 * c0.time_us);
  assert.equal(await page.getAttribute('#co-time-compare', 'data-better'), 'false');
  assert.equal(await page.getAttribute('#co-busbw-compare', 'data-better'), 'same');
  await page.click('#co-pin');
  assert.equal(await page.isVisible('#co-time-compare'), false);
  await p.done();
});

test('training view: a bad field shows its error beside that field', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'training');
  // llama-3.1-8b has 32 heads: TP 3 does not divide them.
  await page.fill('#tr-tp', '3');
  assert.match(await fieldError(page, 'tr-tp'), /^parallelism\.tp: must divide/);
  assert.equal(await page.getAttribute('#tr-tp', 'aria-invalid'), 'true');
  assert.equal(await viewStatus(page, 'training'), 'stale');
  assert.equal(await page.isVisible('#tr-stale'), true);
  assert.equal(await fieldError(page, 'tr-global_batch_size'), '');
  await shot(page, 'training-error');
  await page.fill('#tr-tp', '2');
  assert.equal(await fieldError(page, 'tr-tp'), '');
  assert.equal(await viewStatus(page, 'training'), 'ready');

  await page.fill('#tr-global_batch_size', '100'); // 100 sequences over DP 4 is fine; over DP 8 it is not
  await page.fill('#tr-tp', '1');
  assert.match(await fieldError(page, 'tr-global_batch_size'), /workload\.global_batch_size/);
  await page.fill('#tr-global_batch_size', '');
  assert.equal(await fieldError(page, 'tr-global_batch_size'), 'Enter a number.');
  await page.fill('#tr-global_batch_size', '128');
  assert.equal(await viewStatus(page, 'training'), 'ready');
  await checkTraining(page, 'fixed');

  // NVFP4 needs FP4 tensor cores: the H100 has none, a B200 has; a bf16 tail is then accepted.
  await page.selectOption('#tr-compute', 'fp4');
  assert.match(await fieldError(page, 'tr-compute'), /^precision\.compute: the hardware has no dense fp4 peak/);
  await page.selectOption('#tr-hardware', 'b200');
  assert.equal(await fieldError(page, 'tr-compute'), '');
  await page.fill('#tr-bf16_last_layers', '4');
  assert.equal(await viewStatus(page, 'training'), 'ready');
  assert.deepEqual((await viewRequest(page, 'training')).precision, { compute: 'fp4', bf16_last_layers: 4 });
  await checkTraining(page, 'nvfp4 on b200');
  await page.selectOption('#tr-compute', 'bf16');
  assert.match(
    await fieldError(page, 'tr-bf16_last_layers'),
    /^precision\.bf16_last_layers: needs precision\.compute fp8, mxfp8 or fp4/,
  );
  await page.fill('#tr-bf16_last_layers', '');
  assert.equal(await viewStatus(page, 'training'), 'ready');
  await page.selectOption('#tr-hardware', 'h100-sxm');
  // Llama-3-8B has no MTP module; training one is allowed, 17 is past the bound.
  await page.fill('#tr-mtp_layers', '17');
  assert.match(await fieldError(page, 'tr-mtp_layers'), /^workload\.mtp_layers: /);
  await page.fill('#tr-mtp_layers', '1');
  assert.equal(await viewStatus(page, 'training'), 'ready');
  assert.ok((await viewResult(page, 'training')).breakdown.some((b) => b.op === 'mtp_module'));
  await page.fill('#tr-mtp_layers', '');

  // A custom GPU starts from the preset; its errors show beside the custom box.
  await page.selectOption('#tr-hardware', '__custom__');
  assert.equal(await page.isVisible('#tr-hardware-custom'), true);
  assert.equal(await viewStatus(page, 'training'), 'ready');
  const hw = JSON.parse(await page.inputValue('#tr-hardware-custom'));
  await page.fill('#tr-hardware-custom', JSON.stringify({ ...hw, hbm_bandwidth_GBps: -1 }));
  assert.match(await fieldError(page, 'tr-hardware-custom'), /^hardware\.hbm_bandwidth_GBps/);
  assert.equal(await fieldError(page, 'tr-hardware'), '');
  await page.fill('#tr-hardware-custom', '{ "name": ');
  assert.match(await fieldError(page, 'tr-hardware-custom'), /JSON/);
  await page.fill('#tr-hardware-custom', JSON.stringify(hw));
  assert.equal(await viewStatus(page, 'training'), 'ready');
  assert.equal(typeof (await viewRequest(page, 'training')).hardware, 'object');
  await checkTraining(page, 'custom GPU');
  await p.done();
});

// Issue 13: the training view's GPU takes what-if factors too: twice the compute doubles the peak
// its MFU is taken against (2 x 989.4 TFLOPS bf16 on an H100) and the link carries them.
test('training view: what-if hardware scales the preset', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'training');
  await page.selectOption('#tr-hardware', 'h100-sxm');
  await page.click('#tr-hardware-whatif > summary');
  await page.fill('#tr-hardware-whatif-compute', '2');
  await page.waitForFunction(() => window.flopcastViews.request('training').hardware?.scale?.compute === 2);
  assert.equal(await viewStatus(page, 'training'), 'ready');
  const r = await checkTraining(page, 'what-if');
  assert.equal(r.peak_tflops_per_gpu, 1978.8);
  assert.match(r.hardware.name, /\(what-if: 2x compute\)$/);
  const link = await shareLink(page);
  const q = await openPage(link.hash.slice(1));
  await q.page.waitForFunction(() => document.getElementById('view-training').dataset.status === 'ready');
  assert.equal(await q.page.inputValue('#tr-hardware-whatif-compute'), '2');
  assert.deepEqual((await viewRequest(q.page, 'training')).hardware, { preset: 'h100-sxm', scale: { compute: 2 } });
  await q.done();
  // A factor the core rejects shows beside its input.
  await page.fill('#tr-hardware-whatif-compute', '0');
  await page.waitForFunction(() => document.getElementById('err-tr-hardware-whatif-compute').textContent !== '');
  assert.match(await fieldError(page, 'tr-hardware-whatif-compute'), /hardware\.scale\.compute/);
  await p.done();
});

async function shareLink(page) {
  await page.evaluate(() => {
    document.getElementById('share-url').value = '';
  });
  await page.click('#share-button');
  await page.waitForFunction(() => document.getElementById('share-url').value.length > 0);
  return new URL(await page.inputValue('#share-url'));
}

test('training view: share link round-trips, and a bad link value shows beside its field', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'training');
  await page.selectOption('#tr-model', 'llama-3-70b');
  await page.fill('#tr-num_gpus', '64');
  await page.fill('#tr-tp', '8');
  await page.fill('#tr-pp', '2');
  await page.fill('#tr-vpp', '2');
  await page.check('#tr-sp');
  await page.selectOption('#tr-sharding', 'parallelism.zero=1');
  await page.fill('#tr-total_tokens', '2e11');
  await page.selectOption('#tr-recompute', 'selective');
  const req = await viewRequest(page, 'training');
  const res = await viewResult(page, 'training');
  const link = await shareLink(page);
  assert.equal(`${link.origin}${link.pathname}`, baseUrl);
  assert.match(link.hash, /[#&]task=training(&|$)/, 'the link carries the task');

  const q = await openPage(link.hash.slice(1));
  await q.page.waitForFunction(() => document.getElementById('view-training').dataset.status === 'ready');
  assert.equal(await q.page.evaluate(() => window.flopcastViews.active()), 'training');
  assert.equal(await q.page.getAttribute('#tab-training', 'aria-selected'), 'true');
  assert.deepEqual(await viewRequest(q.page, 'training'), req, 'the link reproduces the request');
  assert.deepEqual(await viewResult(q.page, 'training'), res, 'the link reproduces the numbers');
  assert.equal(await q.page.isChecked('#tr-sp'), true);
  assert.equal(await q.page.inputValue('#tr-pp'), '2');
  // The inference view still works behind the other tab.
  await q.page.click('#tab-inference');
  assert.equal(await q.page.evaluate(() => document.documentElement.dataset.status), 'ready');
  await q.done();

  // `flopcast link` encodes in C++ (keys in another order): the page reads it as the same setup.
  const cpp = await page.evaluate((r) => JSON.parse(window.flopcast.module.encode_link(JSON.stringify(r))), req);
  assert.equal(cpp.ok, true);
  const c = await openPage(cpp.result);
  await c.page.waitForFunction(() => document.getElementById('view-training').dataset.status === 'ready');
  assert.deepEqual(await viewRequest(c.page, 'training'), req, 'the C++ link reproduces the request');
  await c.done();

  const bad = link.hash.slice(1).replace(/parallelism\.tp=8/, 'parallelism.tp=3');
  const b = await openPage(bad);
  await b.page.waitForFunction(() => document.getElementById('view-training').dataset.status === 'stale');
  assert.match(await fieldError(b.page, 'tr-tp'), /parallelism\.tp/);
  assert.equal(await b.page.inputValue('#tr-tp'), '3');
  assert.equal(await b.page.inputValue('#tr-num_gpus'), '64', 'the other fields are kept');
  await b.done();

  // hashchange in the same page applies a training link too.
  await page.fill('#tr-num_gpus', '8');
  await page.evaluate((h) => {
    // Share put this link in the address bar: clear it, so that setting it is a change again.
    history.replaceState(null, '', location.pathname);
    location.hash = h;
  }, link.hash);
  await page.waitForFunction(() => document.getElementById('tr-num_gpus').value === '64');
  assert.deepEqual(await viewRequest(page, 'training'), req);
  await p.done();
});

// Issue 11: `__proto__.hint=...` in a training link wrote attacker text under every training
// field, and `__proto__.path=...` broke the serving form. Such keys are refused by name.
test('a link cannot write through __proto__', async () => {
  for (const hash of [
    'v=1&task=training&__proto__.hint=INJECTED-HINT&model=llama-3-8b',
    'v=1&task=serving&__proto__.path=workload.prompt_tokens&constructor.prototype.x=1',
  ]) {
    const p = await openPage(hash);
    const task = hash.includes('training') ? 'training' : 'serving';
    await p.page.waitForFunction(
      (t) => ['ready', 'stale'].includes(document.getElementById(`view-${t}`).dataset.status),
      task,
    );
    assert.equal(await p.page.evaluate(() => ({}).hint ?? {}.path ?? {}.x ?? null), null, 'Object.prototype untouched');
    const text = await p.page.evaluate((t) => document.getElementById(`view-${t}`).textContent, task);
    assert.ok(!text.includes('INJECTED'), 'no injected text on the page');
    assert.match(text, /__proto__[^ ]*: not a request field/);
    await p.done();
  }
});

// ------------------------------------------------------------------ serving

const sweepDone = (page) =>
  page.waitForFunction(() => document.getElementById('view-serving').dataset.sweep === 'done');

test('serving view: analytic curves against rate with the saturation marker', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'serving');
  await sweepDone(page);
  const req = await viewRequest(page, 'serving');
  assert.equal(req.mode, 'analytic');
  const env = await estimate(page, req);
  assert.equal(env.ok, true);
  const r = env.result;
  assert.deepEqual(await viewResult(page, 'serving'), r);
  assert.equal(await value(page, 'sv-ttft'), r.ttft_ms.p50);
  assert.equal(await value(page, 'sv-tpot'), r.tpot_ms.p50);
  assert.equal(await value(page, 'sv-sat'), r.saturation_rate_per_s);
  assert.equal(await value(page, 'sv-thr'), r.throughput.output_tokens_per_s);
  // Every card shows the 80 % band the module gives (issue 44: serving cards showed none).
  const subs = await page.evaluate(() =>
    Object.fromEntries(
      ['ttft', 'tpot', 'e2e', 'thr'].map((id) => [id, document.getElementById(`sv-${id}-sub`).textContent]),
    ),
  );
  for (const id of ['ttft', 'tpot', 'e2e', 'thr'])
    assert.match(subs[id], /80% band [0-9.,]+.*–[0-9.,]+/, `${id}: ${subs[id]}`);
  const lowMs = r.interval.ttft_ms.p50.low;
  assert.ok(lowMs < r.ttft_ms.p50 && r.interval.ttft_ms.p50.high > r.ttft_ms.p50, 'the band holds the estimate');
  // One line under the numbers of each tab says what a band is and how it was measured.
  const notes = await page.evaluate(() =>
    ['inference', 'training', 'serving'].map((t) => document.querySelectorAll(`#view-${t} .band-note`).length),
  );
  assert.deepEqual(notes, [1, 0, 1], 'a band note on the inference and serving tabs (training not built yet)');
  assert.match(await page.textContent('#view-serving .band-note'), /left out of every fit/);
  const charts = await page.evaluate(() =>
    [...document.querySelectorAll('#sv-charts .chart-box')].map((c) => ({
      name: c.dataset.chart,
      saturation: Number(c.querySelector('.marker.saturation')?.dataset.x),
      series: [...c.querySelectorAll('path.series')].map((s) => ({
        name: s.dataset.series,
        points: (s.getAttribute('d').match(/[ML]/g) || []).length,
      })),
    })),
  );
  assert.deepEqual(
    charts.map((c) => c.name),
    ['ttft', 'tpot', 'e2e', 'throughput'],
  );
  for (const c of charts) {
    assert.equal(c.saturation, r.saturation_rate_per_s, `${c.name}: saturation marker at the saturation rate`);
    assert.ok(
      c.series.length >= 1 && c.series.every((s) => s.points >= 8),
      `${c.name}: curves drawn ${JSON.stringify(c.series)}`,
    );
  }
  assert.deepEqual(
    charts[0].series.map((s) => s.name),
    ['p50', 'p99'],
  );
  await shot(page, 'serving');

  // Above saturation: no latency, the overload is stated.
  await page.fill('#sv-rate', String(Math.ceil(r.saturation_rate_per_s * 1.5)));
  await sweepDone(page);
  assert.equal(await page.getAttribute('#sv-saturated', 'data-saturated'), 'true');
  assert.equal(await page.textContent('#sv-ttft'), '—');
  assert.equal(await page.isVisible('#sv-warnings-panel'), true);
  // A bad value shows beside its field.
  await page.fill('#sv-tp', '3');
  assert.match(await fieldError(page, 'sv-tp'), /tp/);
  assert.equal(await viewStatus(page, 'serving'), 'stale');
  assert.equal(await page.isDisabled('#sv-simulate'), true, 'no simulation of an invalid setup');
  await p.done();
});

// Issue 44: a serving setup that does not fit showed "0 tok/s", "0.00 %" and empty curves on a
// 1e-9 axis. Llama-3.1-70B in bf16 on one A100 80GB leaves no memory for a KV cache: the verdict
// replaces the numbers and the curves; at TP 2 on two GPUs they are back.
test('serving view: a setup that does not fit gives a verdict, not zeros', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'serving');
  await sweepDone(page);
  await page.selectOption('#sv-model', 'llama-3.1-70b');
  await page.selectOption('#sv-hardware', 'a100-sxm-80g');
  await page.fill('#sv-num_gpus', '1');
  await page.fill('#sv-tp', '1');
  await sweepDone(page);
  assert.equal((await viewResult(page, 'serving')).fits, false);
  const seen = await page.evaluate(() => ({
    headline: document.getElementById('sv-headline').hidden,
    curves: document.getElementById('sv-curves').hidden,
    verdict: document.getElementById('sv-unfit').hidden,
    text: document.getElementById('sv-unfit').textContent,
  }));
  assert.deepEqual([seen.headline, seen.curves, seen.verdict], [true, true, false]);
  assert.match(seen.text, /^Does not fit: weights, reserve and activations leave no memory for a KV cache/);
  assert.equal(await page.isVisible('#view-serving .band-note'), false);
  await page.fill('#sv-tp', '2');
  await page.fill('#sv-num_gpus', '2');
  await sweepDone(page);
  assert.equal((await viewResult(page, 'serving')).fits, true);
  assert.equal(await page.isVisible('#sv-headline'), true);
  assert.equal(await page.isVisible('#sv-curves'), true);
  assert.equal(await page.isVisible('#sv-unfit'), false);
  await p.done();
});

// Issue 14: the serving setups with the most capacity that meet the SLOs, each one click away.
test('serving view: setup search lists the best setups for the load and Use loads one', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'serving');
  await page.selectOption('#sv-model', 'llama-3.1-70b');
  await page.fill('#sv-num_gpus', '8');
  await page.fill('#sv-tp', '8');
  await page.fill('#sv-slo_tpot', '50');
  await page.click('#sv-search-run');
  await searchDone(page, 'sv');
  const rows = await page.evaluate(() =>
    [...document.querySelectorAll('#sv-search-table tbody tr')].map((tr) => ({
      cells: [...tr.children].map((td) => td.textContent),
      rate: Number(tr.querySelector('[data-value]').dataset.value),
    })),
  );
  // The table is the module's answer to the search request of this setup.
  const q = await viewRequest(page, 'serving');
  delete q.parallelism;
  const env = await estimate(page, { ...q, task: 'search', search: { target: 'serving', top: 10 } });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  const res = env.result;
  assert.equal(rows.length, res.candidates.length);
  assert.ok(rows.length >= 2 && rows.length <= 10);
  rows.forEach((r, i) => {
    assert.equal(r.rate, res.candidates[i].saturation_rate_per_s, `row ${i + 1}: saturation rate`);
    assert.equal(r.cells[1], String(res.candidates[i].parallelism.tp), `row ${i + 1}: tp`);
    if (i > 0) assert.ok(r.rate <= rows[i - 1].rate, 'most capacity first');
  });
  const note = await page.evaluate(() => document.getElementById('sv-search-note').textContent);
  assert.match(
    note,
    new RegExp(
      `^${res.evaluated} setups considered, ${res.keeping_up} keep up with this load, ${res.meeting_slo} meet the SLOs\\.`,
    ),
  );
  assert.match(await page.textContent('#sv-frontier'), /^Frontier, capacity per GPU against speed per user: TP /);
  // Issue 44: the frontier as a chart, one dot per frontier setup (line through them, slowest per
  // user first) and one per listed setup, each dot named by its setup and figures.
  const chart = await page.evaluate(() => {
    const dots = (s) =>
      [...document.querySelectorAll(`#sv-frontier-chart circle.dot[data-series="${s}"]`)].map((c) => ({
        x: Number(c.getAttribute('cx')),
        title: c.querySelector('title')?.textContent ?? '',
        focusable: c.getAttribute('tabindex') === '0',
      }));
    return {
      frontier: dots('frontier'),
      listed: dots('listed setups'),
      line: Boolean(document.querySelector('#sv-frontier-chart path.series[data-series="frontier"]')),
      listedLine: Boolean(document.querySelector('#sv-frontier-chart path.series[data-series="listed setups"]')),
    };
  });
  assert.equal(chart.frontier.length, res.frontier.length);
  assert.equal(chart.listed.length, res.candidates.length);
  assert.equal(chart.line, true);
  assert.equal(chart.listedLine, false, 'the listed setups are dots only');
  chart.frontier.forEach((d, i) => {
    assert.ok(d.focusable);
    if (i > 0) assert.ok(d.x >= chart.frontier[i - 1].x, 'frontier drawn along speed per user');
  });
  const slowest = [...res.frontier].sort((a, b) => a.tokens_per_s_per_user - b.tokens_per_s_per_user)[0];
  assert.match(
    chart.frontier[0].title,
    new RegExp(`^TP ${slowest.parallelism.tp}.*tok/s per GPU at .* tok/s per user$`),
  );
  // Use: the second setup goes into the form, and the estimate is that setup's.
  const second = res.candidates[1];
  await page.click('#sv-search-table button[data-rank="2"][data-action="Use"]');
  const req = await viewRequest(page, 'serving');
  assert.equal(req.parallelism.tp, second.parallelism.tp);
  assert.equal(req.engine.max_num_seqs, second.max_num_seqs);
  assert.equal(req.engine.max_num_batched_tokens, second.max_num_batched_tokens);
  assert.equal((await viewResult(page, 'serving')).saturation_rate_per_s, second.saturation_rate_per_s);
  assert.equal(await page.evaluate(() => document.getElementById('sv-search-table').dataset.stale), 'false');
  // Another rate: the search no longer describes the setup.
  await page.fill('#sv-rate', '3');
  assert.equal(await page.evaluate(() => document.getElementById('sv-search-table').dataset.stale), 'true');
  await shot(page, 'serving-search');
  await p.done();
});

// Issue 14: aggregated or disaggregated. The form prices a split into prefill and decode
// instances (an incomplete one is an error beside its field); the search tries every split when
// asked, keeping the form's KV link, and Use loads a split with its instances.
test('serving view: disaggregated pools in the form and in the setup search', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'serving');
  await page.selectOption('#sv-model', 'llama-3.1-8b');
  await page.fill('#sv-num_gpus', '4');
  await page.fill('#sv-rate', '20');
  await page.fill('#sv-prompt_tokens', '2048');
  await page.fill('#sv-output_tokens', '256');
  await page.fill('#sv-slo_tpot', '9');
  await page.fill('#sv-prefill_instances', '2');
  assert.match(await fieldError(page, 'sv-decode_instances'), /^features\.disaggregated\.decode_instances: /);
  assert.equal(await viewStatus(page, 'serving'), 'stale');
  await page.fill('#sv-decode_instances', '2');
  await page.fill('#sv-kv_link', '100');
  await sweepDone(page);
  assert.equal(await viewStatus(page, 'serving'), 'ready');
  assert.match(await page.textContent('#sv-subtitle'), / · 2 prefill \+ 2 decode instances · /);
  // Which pool binds: the module's pool saturation rates under the headline's.
  const pools = Object.fromEntries(
    (await viewResult(page, 'serving')).assumptions
      .filter((a) => a.name.endsWith('_pool_saturation_rate'))
      .map((a) => [a.name, a.value]),
  );
  assert.equal(Object.keys(pools).length, 2);
  assert.match(await page.textContent('#sv-sat-sub'), /prefill pool [0-9.,]+, decode pool [0-9.,]+ req\/s/);

  await page.check('#sv-search-disagg');
  await page.click('#sv-search-run');
  await searchDone(page, 'sv');
  // The module's answer to the search of this setup: its instances left to the search, its link kept.
  const q = await viewRequest(page, 'serving');
  delete q.parallelism;
  q.features.disaggregated = { kv_link_GBps: 100 };
  const env = await estimate(page, {
    ...q,
    task: 'search',
    search: { target: 'serving', top: 10, disaggregated: [false, true] },
  });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  const res = env.result;
  const shown = await searchColumn(page, 'sv', 'Replicas');
  assert.deepEqual(
    shown,
    res.candidates.map((c) =>
      c.disaggregated
        ? `${c.disaggregated.prefill_instances} prefill + ${c.disaggregated.decode_instances} decode`
        : String(c.replicas),
    ),
  );
  const split = res.candidates.findIndex((c) => c.disaggregated) + 1;
  assert.ok(split > 0, 'a disaggregated setup is listed');
  // Use: its instances and link go into the form, and the estimate is that setup's.
  const chosen = res.candidates[split - 1];
  await page.click(`#sv-search-table button[data-rank="${split}"][data-action="Use"]`);
  const req = await viewRequest(page, 'serving');
  assert.deepEqual(req.features.disaggregated, chosen.request.features.disaggregated);
  assert.equal(req.features.disaggregated.kv_link_GBps, 100);
  assert.equal((await viewResult(page, 'serving')).saturation_rate_per_s, chosen.saturation_rate_per_s);
  // Without the splits the table no longer answers the search.
  await page.uncheck('#sv-search-disagg');
  assert.equal(await page.evaluate(() => document.getElementById('sv-search-table').dataset.stale), 'true');
  await p.done();
});

// Issue 44: how many GPUs for R req/s under my SLO, ending in the engine's launch command.
// Llama-3.1-70B FP8 at 20 req/s within a 50 ms TPOT on H100s: the module's search.fewest_gpus
// answer (8 GPUs, four tp-2 replicas) is the note and the table, and Launch offers the row's
// vLLM command (the request's engine).
test('serving view: the setup search finds the fewest GPUs for the load with launch commands', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'serving');
  await page.selectOption('#sv-model', 'llama-3.1-70b');
  await page.selectOption('#sv-hardware', 'h100-sxm');
  await page.selectOption('#sv-weights', { label: 'fp8' });
  await page.selectOption('#sv-kv_cache', 'fp8');
  await page.fill('#sv-num_gpus', '64');
  await page.fill('#sv-tp', '2');
  await page.fill('#sv-rate', '20');
  await page.fill('#sv-prompt_tokens', '1000');
  await page.fill('#sv-output_tokens', '200');
  await page.fill('#sv-slo_tpot', '50');
  await sweepDone(page);
  await page.check('#sv-search-fewest');
  await page.click('#sv-search-run');
  await searchDone(page, 'sv');
  const q = await viewRequest(page, 'serving');
  delete q.parallelism;
  const env = await estimate(page, { ...q, task: 'search', search: { target: 'serving', top: 10, fewest_gpus: true } });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  const res = env.result;
  assert.equal(res.num_gpus, 8);
  assert.match(
    await page.textContent('#sv-search-note'),
    /^Fewest GPUs meeting the SLOs: 8 \(counts searched: 1, 2, 3, 4, 5, 6, 7, 8\)\. /,
  );
  assert.deepEqual(
    await searchColumn(page, 'sv', 'Replicas'),
    res.candidates.map((c) => String(c.replicas)),
  );
  await page.click('#sv-search-table button[data-rank="1"][data-action="Launch"]');
  await page.waitForFunction(() => document.getElementById('share-url').value.length > 0);
  const c = res.candidates[0];
  assert.equal(await page.inputValue('#share-url'), `vllm serve <checkpoint> ${c.launch.vllm}`);
  assert.match(c.launch.vllm, new RegExp(`^--tensor-parallel-size ${c.parallelism.tp} `));
  // Unticked, the table no longer answers the search.
  await page.uncheck('#sv-search-fewest');
  assert.equal(await page.evaluate(() => document.getElementById('sv-search-table').dataset.stale), 'true');
  await p.done();
});

// Issue 14: which GPU type serves this load for the fewest dollars. The box lists GPU types with
// their counts and prices; the table is the module's answer to search.hardware, ranked by output
// tokens per dollar, and Use loads a setup with its hardware, GPU count and price. A malformed
// entry is shown beside the box and nothing runs.
test('serving view: the setup search compares GPU types at their prices', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'serving');
  await page.selectOption('#sv-model', 'llama-3.1-70b');
  await page.fill('#sv-slo_tpot', '50');
  await page.fill('#sv-search-hardware', 'h100-sxm:8');
  await page.click('#sv-search-run');
  assert.match(await page.textContent('#err-sv-search-hardware'), /"h100-sxm:8": expected id:GPUs:price/);
  assert.equal(await page.getAttribute('#sv-search-hardware', 'aria-invalid'), 'true');
  assert.equal(await page.textContent('#sv-search-note'), 'Fix the highlighted fields first.');
  // A GPU the module does not know: its error, naming the entry, beside the box too.
  await page.fill('#sv-search-hardware', 'h100-sxm:8:2.49, h1000:8:3');
  await page.click('#sv-search-run');
  await page.waitForFunction(() => document.getElementById('sv-search').dataset.state === 'error');
  assert.match(
    await page.textContent('#err-sv-search-hardware'),
    /^search\.hardware\[1\]\.hardware: unknown hardware preset "h1000"/,
  );
  await page.fill('#sv-search-hardware', 'h100-sxm:8:2.49, b200:8:5.5');
  await page.click('#sv-search-run');
  await searchDone(page, 'sv');
  assert.equal(await page.textContent('#err-sv-search-hardware'), '');
  const q = await viewRequest(page, 'serving');
  delete q.parallelism;
  delete q.hardware;
  delete q.num_gpus;
  const env = await estimate(page, {
    ...q,
    task: 'search',
    search: {
      target: 'serving',
      top: 10,
      hardware: [
        { hardware: 'h100-sxm', num_gpus: 8, cost_per_gpu_hour_usd: 2.49 },
        { hardware: 'b200', num_gpus: 8, cost_per_gpu_hour_usd: 5.5 },
      ],
    },
  });
  assert.equal(env.ok, true, JSON.stringify(env.error));
  const res = env.result;
  assert.ok(res.candidates.length >= 2);
  assert.deepEqual(
    await searchColumn(page, 'sv', 'GPU'),
    res.candidates.map((c) => `${c.hardware} ×${c.num_gpus}`),
  );
  // Ranked by the tokens a dollar buys at the low edge of each GPU type's throughput band.
  res.candidates.forEach((c, i) => {
    assert.ok(c.output_tokens_per_usd_low <= c.output_tokens_per_usd);
    if (i > 0)
      assert.ok(
        c.output_tokens_per_usd_low <= res.candidates[i - 1].output_tokens_per_usd_low,
        'most per dollar at the band edge first',
      );
  });
  assert.match(await page.textContent('#sv-frontier'), /^Frontier, tokens per dollar against speed per user: /);
  // Use: the first setup's hardware, GPU count and price go into the form.
  const first = res.candidates[0];
  await page.click('#sv-search-table button[data-rank="1"][data-action="Use"]');
  const req = await viewRequest(page, 'serving');
  assert.equal(req.hardware, first.hardware);
  assert.equal(req.num_gpus, first.num_gpus);
  assert.equal(req.cost_per_gpu_hour_usd, first.cost_per_gpu_hour_usd);
  assert.equal((await viewResult(page, 'serving')).saturation_rate_per_s, first.saturation_rate_per_s);
  // Other GPU types in the box: the table no longer answers it.
  await page.fill('#sv-search-hardware', 'h100-sxm:8:2');
  assert.equal(await page.evaluate(() => document.getElementById('sv-search-table').dataset.stale), 'true');
  await p.done();
});

// Issue 14: a search runs in its own worker (loaded with the page): the click returns at once and
// the page shows the search running, Cancel ends it, a finished one says how long it took, and
// the search makes no request.
test('search runs in a worker: the page stays responsive and Cancel ends it', async () => {
  const p = await openPage();
  const { page, requests } = p;
  await openTab(page, 'serving');
  await sweepDone(page);
  // ~10,000 setups of Llama-3.1-70B on 8 H100: seconds of work for the module.
  await page.selectOption('#sv-model', 'llama-3.1-70b');
  await page.fill('#sv-num_gpus', '8');
  await sweepDone(page);
  await settle(requests);
  const loaded = requests.length;
  // Run, then Cancel, within one task of the page: the worker's answer cannot arrive in between.
  const seen = await page.evaluate(() => {
    const t0 = performance.now();
    document.getElementById('sv-search-run').click();
    const clickMs = performance.now() - t0;
    const running = {
      state: document.getElementById('sv-search').dataset.state,
      runDisabled: document.getElementById('sv-search-run').disabled,
      cancelHidden: document.getElementById('sv-search-cancel').hidden,
      note: document.getElementById('sv-search-note').textContent,
    };
    document.getElementById('sv-search-cancel').click();
    return { clickMs, running };
  });
  // The page's thread only posted the request: the search itself is the worker's.
  assert.ok(seen.clickMs < 50, `the click took ${seen.clickMs} ms`);
  assert.deepEqual(seen.running, {
    state: 'running',
    runDisabled: true,
    cancelHidden: false,
    note: 'Searching… 0.0 s',
  });
  assert.equal(await page.getAttribute('#sv-search', 'data-state'), 'cancelled');
  assert.equal(await page.textContent('#sv-search-note'), 'Search cancelled.');
  assert.equal(await page.isVisible('#sv-search-cancel'), false);
  assert.equal(await page.isDisabled('#sv-search-run'), false);
  assert.equal(requests.length, loaded, 'the search made no request: its worker loaded with the page');
  // After a cancel the next search (in a new worker) runs to the end; the seconds count meanwhile.
  await page.click('#sv-search-run');
  await searchDone(page, 'sv');
  assert.match(await page.textContent('#sv-search-note'), /setups considered, .* Searched in [0-9]+\.[0-9] s\.$/);
  assert.ok((await page.$$('#sv-search-table tbody tr')).length >= 1);
  await p.done();
});

test('serving view: simulate runs to completion in a worker, and cancel stops a run', async () => {
  const p = await openPage();
  const { page, requests } = p;
  await openTab(page, 'serving');
  await sweepDone(page);
  await page.fill('#sv-num_requests', '2000');
  await page.fill('#sv-rate', '20');
  assert.ok(
    requests.some((u) => u.endsWith('/sim-worker.js')),
    'the worker loads with the page',
  );
  await settle(requests);
  const loaded = requests.length;
  await page.click('#sv-simulate');
  await page.waitForFunction(() => document.getElementById('sv-sim').dataset.state === 'done', null, {
    timeout: 60000,
  });
  assert.equal(requests.length, loaded, 'Simulate makes no request: its worker loaded with the page');
  const req = { ...(await viewRequest(page, 'serving')), mode: 'simulate' };
  const env = await estimate(page, req);
  assert.equal(env.ok, true);
  const sim = env.result;
  assert.equal(sim.simulation.completed, 2000);
  const cells = await page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('#sv-percentiles tbody tr')].map((tr) => [
        tr.dataset.key,
        [...tr.querySelectorAll('td')].map((td) => Number(td.dataset.value)),
      ]),
    ),
  );
  for (const key of ['ttft_ms', 'tpot_ms', 'e2e_ms', 'queueing_ms']) {
    const s = sim[key];
    assert.deepEqual(
      cells[key],
      [s.mean, s.p50, s.p90, s.p99],
      `${key}: the worker's numbers are the module's (seeded)`,
    );
  }
  const timeline = await page.evaluate(() =>
    [...document.querySelectorAll('#sv-sim-out path.series')].map((s) => s.dataset.series),
  );
  assert.deepEqual(timeline, ['batch size', 'waiting', 'KV blocks used']);
  assert.equal(await page.isVisible('#sv-progress'), false);
  await shot(page, 'serving-simulated');

  // A long run (190,000 requests of 1,024 tokens near saturation: 1.95e8 generated tokens, just
  // under the simulator's 2e8) is cancelled.
  await page.fill('#sv-output_tokens', '1024');
  assert.equal(await page.evaluate(() => document.getElementById('sv-sim').classList.contains('outdated')), true);
  await page.fill('#sv-rate', String(Math.floor(0.95 * (await viewResult(page, 'serving')).saturation_rate_per_s)));
  await page.fill('#sv-num_requests', '190000');
  await page.click('#sv-simulate');
  await page.waitForFunction(() => document.getElementById('sv-sim').dataset.state === 'running');
  assert.equal(await page.isVisible('#sv-progress'), true);
  assert.equal(await page.isVisible('#sv-cancel'), true);
  // Issue 11: the focus moves from Simulate (disabled while it runs) to Cancel, and back after.
  const focused = () => page.evaluate(() => document.activeElement?.id);
  assert.equal(await focused(), 'sv-cancel');
  await page.waitForFunction(() => document.getElementById('sv-elapsed').textContent !== '0.0 s');
  const workers = page.workers();
  assert.equal(workers.length, 2, 'the simulation worker and the search worker');
  const closed = new Promise((resolve) => workers.forEach((w) => w.once('close', resolve)));
  await page.click('#sv-cancel');
  // Cancel ends the worker itself, not just the progress display.
  await Promise.race([
    closed,
    new Promise((_, reject) => setTimeout(() => reject(new Error('the worker was not terminated')), 5000)),
  ]);
  assert.equal(page.workers().length, 1, 'the search worker is left');
  assert.equal(await page.getAttribute('#sv-sim', 'data-state'), 'cancelled');
  assert.equal(await page.isVisible('#sv-progress'), false);
  assert.equal(await page.textContent('#sv-sim-status'), 'Cancelled.');
  assert.equal(await focused(), 'sv-simulate');
  // The page stayed responsive during the run, and a new run works after a cancel.
  await page.fill('#sv-num_requests', '300');
  await page.click('#sv-simulate');
  await page.waitForFunction(() => document.getElementById('sv-sim').dataset.state === 'done', null, {
    timeout: 60000,
  });
  assert.match(await page.textContent('#sv-sim-status'), /Simulated 300 of 300 requests/);
  await p.done();
});

// Issue 42: a hybrid model is served; its simulated facts show each request's Mamba state.
test('serving view: a hybrid model simulates with its Mamba state per request', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'serving');
  await page.selectOption('#sv-model', 'nemotron-3-nano-30b-a3b');
  await page.selectOption('#sv-hardware', 'h200-sxm');
  await page.fill('#sv-rate', '2');
  await page.fill('#sv-num_requests', '200');
  await sweepDone(page);
  await page.click('#sv-simulate');
  await page.waitForFunction(() => document.getElementById('sv-sim').dataset.state === 'done', null, {
    timeout: 60000,
  });
  const facts = await page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('#sv-sim-out dl.facts > div')].map((d) => [
        d.querySelector('dt').textContent,
        d.querySelector('dd').textContent,
      ]),
    ),
  );
  // 23 layers · (64·64·128 · 4 B + 3 · 6,144 · 2 B) = 49.08 MB (serving_test.cpp).
  assert.equal(facts['Recurrent state per request'], '49.08 MB');
  await p.done();
});

test('serving view: share link round-trips', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'serving');
  await page.selectOption('#sv-hardware', 'a100-sxm-80g');
  await page.fill('#sv-num_gpus', '4');
  await page.fill('#sv-tp', '4');
  await page.selectOption('#sv-dp_attention', 'parallelism.dp_attention=true');
  // Two attention groups of 2 GPUs (SGLang --tp 4 --dp-size 2 --enable-dp-attention).
  await page.fill('#sv-attention_tp', '2');
  await page.selectOption('#sv-engine', 'sglang');
  await page.selectOption('#sv-arrival', 'gamma');
  await page.fill('#sv-cv', '2');
  await page.fill('#sv-rate', '7.5');
  await page.fill('#sv-prompt_tokens', '1000');
  await page.selectOption('#sv-chunked_prefill', 'engine.chunked_prefill=false');
  await page.selectOption('#sv-async_scheduling', 'engine.async_scheduling=false');
  await page.selectOption('#sv-cuda_graphs', 'engine.cuda_graphs=false');
  await page.selectOption('#sv-capacity_policy', 'engine.capacity_policy="guaranteed_no_evict"');
  await page.fill('#sv-slo_ttft', '500');
  await page.selectOption('#sv-attention_weights', 'precision.attention_weights="fp16"');
  await sweepDone(page);
  const req = await viewRequest(page, 'serving');
  assert.equal(req.engine.chunked_prefill, false);
  assert.equal(req.engine.async_scheduling, false);
  assert.equal(req.engine.cuda_graphs, false);
  assert.equal(req.engine.capacity_policy, 'guaranteed_no_evict');
  assert.equal(req.precision.attention_weights, 'fp16');
  assert.equal(req.parallelism.dp_attention, true);
  assert.equal(req.parallelism.attention_tp, 2);
  assert.equal(req.workload.arrival.cv, 2);
  const res = await viewResult(page, 'serving');
  const link = await shareLink(page);
  assert.match(link.hash, /[#&]task=serving(&|$)/);
  const q = await openPage(link.hash.slice(1));
  await q.page.waitForFunction(() => document.getElementById('view-serving')?.dataset.sweep === 'done');
  assert.equal(await q.page.evaluate(() => window.flopcastViews.active()), 'serving');
  assert.deepEqual(await viewRequest(q.page, 'serving'), req);
  assert.deepEqual(await viewResult(q.page, 'serving'), res);
  assert.equal(await q.page.inputValue('#sv-cv'), '2');
  assert.equal(await q.page.inputValue('#sv-chunked_prefill'), 'engine.chunked_prefill=false');
  assert.equal(await q.page.inputValue('#sv-async_scheduling'), 'engine.async_scheduling=false');
  assert.equal(await q.page.inputValue('#sv-cuda_graphs'), 'engine.cuda_graphs=false');
  assert.equal(await q.page.inputValue('#sv-capacity_policy'), 'engine.capacity_policy="guaranteed_no_evict"');
  assert.equal(await q.page.inputValue('#sv-dp_attention'), 'parallelism.dp_attention=true');
  assert.equal(await q.page.inputValue('#sv-attention_tp'), '2');
  assert.equal(await q.page.inputValue('#sv-attention_weights'), 'precision.attention_weights="fp16"');
  await q.done();
  await p.done();
});

test('serving view: an MTP draft goes into the request for DeepSeek and is refused for a dense model', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'serving');
  // Llama-3-8B has no multi-token-prediction layer: the core's error sits beside the draft select.
  await page.selectOption('#sv-draft', 'features.speculative.draft="mtp"');
  await page.fill('#sv-draft_tokens', '1');
  await page.fill('#sv-acceptance', '0.85');
  assert.match(
    await fieldError(page, 'sv-draft'),
    /features\.speculative\.draft: needs a model with multi-token-prediction layers/,
  );
  // DeepSeek-R1 fp8 on 8 H200 has one: the request carries the draft and the view computes.
  await page.selectOption('#sv-model', 'deepseek-r1');
  await page.selectOption('#sv-hardware', 'h200-sxm');
  await page.fill('#sv-num_gpus', '8');
  await page.fill('#sv-tp', '8');
  await page.selectOption('#sv-weights', 'fp8');
  await page.fill('#sv-rate', '1');
  await sweepDone(page);
  assert.equal(await fieldError(page, 'sv-draft'), '');
  const req = await viewRequest(page, 'serving');
  assert.deepEqual(req.features.speculative, { draft: 'mtp', num_tokens: 1, acceptance_rate: 0.85 });
  await p.done();
});

test('switching tabs makes no request and keeps each view', async () => {
  const p = await openPage();
  const { page, requests } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  await settle(requests);
  const loaded = requests.length;
  await openTab(page, 'training');
  await page.fill('#tr-num_gpus', '16');
  await openTab(page, 'serving');
  await sweepDone(page);
  await openTab(page, 'training');
  assert.equal(await page.inputValue('#tr-num_gpus'), '16');
  await page.click('#tab-inference');
  await page.fill('#batch_size', '4');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.status), 'ready');
  await page.click('#share-button');
  await page.waitForFunction(() => document.getElementById('share-url').value.includes('workload.batch_size=4'));
  assert.deepEqual(requests.slice(loaded), [], 'no request after load');
  await p.done();
});

test('the tabs share one model and GPU: the next tab opens with the presets the last one showed', async () => {
  const p = await openPage();
  const { page } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  await page.selectOption('#model', 'qwen3-32b');
  await page.selectOption('#hardware', 'h200-sxm');
  await openTab(page, 'training');
  assert.equal(await page.inputValue('#tr-model'), 'qwen3-32b');
  assert.equal(await page.inputValue('#tr-hardware'), 'h200-sxm');
  await page.waitForFunction(() => window.flopcastViews.lastResult('training')?.request.model === 'qwen3-32b');
  await page.selectOption('#tr-hardware', 'b200');
  await openTab(page, 'serving');
  await sweepDone(page);
  assert.equal(await page.inputValue('#sv-model'), 'qwen3-32b');
  assert.equal(await page.inputValue('#sv-hardware'), 'b200');
  const served = await page.evaluate(() => window.flopcastViews.lastResult('serving').request);
  assert.deepEqual([served.model, served.hardware], ['qwen3-32b', 'b200'], 'the serving numbers are of that setup');
  await openTab(page, 'collective');
  assert.equal(await page.inputValue('#co-hardware'), 'b200');
  await page.click('#tab-inference');
  assert.equal(await page.inputValue('#hardware'), 'b200');
  await page.waitForFunction(() => window.flopcast.lastResult()?.request.hardware === 'b200');
  assert.equal(await page.inputValue('#model'), 'qwen3-32b');
  await p.done();
});

test('collective view: time and bus bandwidth equal the module, size sweep drawn, link round-trips', async () => {
  const p = await openPage();
  const { page } = p;
  await openTab(page, 'collective');
  await page.fill('#co-ranks', '16');
  await page.selectOption('#co-op', 'all_gather');
  const req = await viewRequest(page, 'collective');
  assert.deepEqual(req.collective, { op: 'all_gather', bytes: 67108864, ranks: 16, algorithm: 'automatic' });
  const env = await estimate(page, req);
  assert.equal(env.ok, true);
  assert.equal(await value(page, 'co-time'), env.result.time_us);
  assert.equal(await value(page, 'co-busbw'), env.result.bus_bandwidth_GBps);
  const paths = await page.evaluate(() =>
    [...document.querySelectorAll('#co-charts path.series')].map((s) => (s.getAttribute('d').match(/L/g) || []).length),
  );
  assert.deepEqual(paths, [24, 24], 'one point per size from 256 B to 4 GiB');
  await shot(page, 'collective');
  await page.fill('#co-ranks', '0');
  assert.match(await fieldError(page, 'co-ranks'), /collective\.ranks/);
  await page.fill('#co-ranks', '16');
  // Issue 11: the size field took bytes only where the CLI takes "64MiB"; both read it the same way.
  await page.fill('#co-bytes', '1GiB');
  assert.equal((await viewRequest(page, 'collective')).collective.bytes, 1073741824);
  await page.fill('#co-bytes', '64XB');
  assert.match(await fieldError(page, 'co-bytes'), /^collective\.bytes: unknown size unit "XB"/);
  await page.fill('#co-bytes', '64MiB');
  assert.equal(await fieldError(page, 'co-bytes'), '');
  assert.deepEqual(await viewRequest(page, 'collective'), req);
  const link = await shareLink(page);
  assert.match(link.hash, /[#&]task=collective(&|$)/);
  const q = await openPage(link.hash.slice(1));
  await q.page.waitForFunction(() => document.getElementById('view-collective').dataset.status === 'ready');
  assert.deepEqual(await viewRequest(q.page, 'collective'), req);
  await q.done();
  await p.done();
});

test('Share follows the active view: disabled for invalid inference inputs only', async () => {
  const p = await openPage();
  const { page } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  await page.fill('#batch_size', '');
  assert.equal(await page.isDisabled('#share-button'), true);
  await openTab(page, 'training');
  assert.equal(await page.isDisabled('#share-button'), false);
  await page.click('#tab-inference');
  assert.equal(await page.isDisabled('#share-button'), true);
  await page.fill('#batch_size', '2');
  assert.equal(await page.isDisabled('#share-button'), false);
  await p.done();
});

// Issue 11: Share never updated the address bar, so a reload lost the setup. Share now puts the
// link there (no history entry), and a reload opens the same tab with the same request.
test('Share puts the link in the address bar; a reload restores the tab and its setup', async () => {
  const p = await openPage();
  const { page } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  await page.fill('#batch_size', '8');
  const entries = await page.evaluate(() => history.length);
  await page.click('#share-button');
  const inferenceLink = await page.inputValue('#share-url');
  assert.equal(await page.evaluate(() => location.href), inferenceLink);
  const inference = await page.evaluate(() => window.flopcast.request());
  assert.equal(inference.workload.batch_size, 8);

  await openTab(page, 'serving');
  await page.fill('#sv-rate', '3');
  await page.waitForFunction(() => window.flopcastViews.request('serving')?.workload?.arrival?.rate_per_s === 3);
  const serving = await viewRequest(page, 'serving');
  await page.click('#share-button');
  const servingLink = await page.inputValue('#share-url');
  assert.equal(await page.evaluate(() => location.href), servingLink);
  assert.equal(await page.evaluate(() => history.length), entries, 'no history entry per share');

  await page.reload();
  await page.waitForFunction(() => window.flopcastViews?.active() === 'serving');
  assert.deepEqual(await viewRequest(page, 'serving'), serving);
  assert.equal(await page.getAttribute('#tab-serving', 'aria-selected'), 'true');
  await p.done();
});

// Issue 44: no skip link, and Escape left the Export menu open. The first Tab reaches a button
// that moves the focus past the form to the tab's results; Escape closes the menu.
test('a skip link moves the focus to the results of the tab; Escape closes the Export menu', async () => {
  const p = await openPage();
  const { page } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'skip-link');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'results');
  await openTab(page, 'serving');
  await page.focus('#skip-link');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'sv-results');
  const hash = await page.evaluate(() => location.hash);
  await page.click('#export > summary');
  assert.equal(await page.evaluate(() => document.getElementById('export').open), true);
  await page.keyboard.press('Escape');
  assert.equal(await page.evaluate(() => document.getElementById('export').open), false);
  assert.equal(await page.evaluate(() => document.activeElement.tagName), 'SUMMARY');
  assert.equal(await page.evaluate(() => location.hash), hash, 'the setup link is untouched');
  await p.done();
});

// Issue 44: after one Share, later edits were lost on reload (the address bar kept the shared
// setup). The address bar now follows each estimate of the tab in view, without history entries.
test('the address bar follows each edit, so a reload keeps edits made after a Share', async () => {
  const p = await openPage();
  const { page } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  const entries = await page.evaluate(() => history.length);
  await page.fill('#batch_size', '8');
  await page.click('#share-button');
  const shared = await page.inputValue('#share-url');
  await page.fill('#batch_size', '3');
  assert.notEqual(await page.evaluate(() => location.href), shared, 'the edit moved the address on');
  await page.reload();
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  assert.equal(await page.evaluate(() => window.flopcast.request().workload.batch_size), 3);

  await openTab(page, 'serving');
  await page.fill('#sv-rate', '3');
  await page.waitForFunction(() => window.flopcastViews.request('serving')?.workload?.arrival?.rate_per_s === 3);
  const serving = await viewRequest(page, 'serving');
  await page.reload();
  await page.waitForFunction(() => window.flopcastViews?.active() === 'serving');
  assert.deepEqual(await viewRequest(page, 'serving'), serving);
  assert.equal(await page.evaluate(() => history.length), entries, 'no history entry per edit');
  await p.done();
});

// Issue 11: a 300 KB link of nested JSON threw a RangeError and left the page blank. A link over
// the module's limit (schema().limits, 1 MiB) is refused before it is copied into the module: the
// message at once, and the default setup computed. The handler takes 20-30 ms run alone (most of
// it the default setup's estimate); late in a full suite run, after the tests before it, it has
// taken 106 ms on an idle machine and 127-145 ms on a busy one, against a bound of 100 ms. The
// bound is 250 ms: a freeze (the 19.7 s of issue 46's 1 MB link) fails it, the browser's garbage
// collection late in a run does not.
test('a 1 MB link is refused with a message within 250 ms', async () => {
  const p = await openPage();
  const { page } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  // The time is the page's: its hashchange handler runs synchronously inside dispatchEvent (the
  // browser's own parsing of a 1 MB address, ~70 ms in Chromium, happens before, in replaceState).
  const took = await page.evaluate(() => {
    history.replaceState(null, '', `#v=1&task=inference&model=${'['.repeat(1 << 20)}`);
    const t0 = performance.now();
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    return performance.now() - t0;
  });
  assert.ok(took < 250, `the message took ${took} ms`);
  assert.match(
    await page.textContent('#general-error'),
    /^From the link: link: 1048601 characters, more than the 1048576 a link may have$/,
  );
  assert.equal(await page.evaluate(() => document.documentElement.dataset.status), 'ready');
  assert.equal((await page.evaluate(() => window.flopcast.request())).model, 'llama-3.1-8b');
  await p.done();
});

// Issue 46: a training link with a key 40,000 levels deep overflowed the decoder's stack (the
// module threw), and 20,000 unknown keys froze the tab and listed 20,000 lines. The first 20 errors
// are listed, the other 19,981 counted in one line, and the view keeps the link's model.
test('a link of a deep key and 20,000 unknown keys lists 21 lines and opens its view', async () => {
  const p = await openPage();
  const { page } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  await page.evaluate(() => {
    const bad = Array.from({ length: 20000 }, (_, i) => `Bad${i}=1`).join('&');
    history.replaceState(null, '', `#v=1&task=training&model=llama-3.1-8b&${'a.'.repeat(40000)}a=1&${bad}`);
    window.dispatchEvent(new HashChangeEvent('hashchange'));
  });
  await page.waitForFunction(() => document.querySelectorAll('#tr-general-error p').length > 0);
  const lines = await page.evaluate(() =>
    [...document.querySelectorAll('#tr-general-error p')]
      .map((e) => e.textContent)
      .filter((t) => t.startsWith('From the link: ')),
  );
  assert.equal(lines.length, 21, lines.join('\n'));
  assert.equal(lines[0], 'From the link: link: a key 40001 levels deep is no request field (they are at most 8)');
  assert.equal(lines[1], 'From the link: Bad0: not a request field');
  assert.equal(lines[20], 'From the link: link: 19981 more errors like the ones above, not listed');
  assert.equal(await page.evaluate(() => window.flopcastViews.active()), 'training');
  assert.equal((await viewRequest(page, 'training')).model, 'llama-3.1-8b');
  await p.done();
});

// Issue 11: on a 390 px phone the page was 441 px wide (the tab strip overflowed, units spilled
// out of cards). Every tab fits the width of a phone: no horizontal scroll.
test('on a 390 px phone no tab scrolls sideways', async () => {
  const p = await openPage('', { width: 390, height: 844 });
  const { page } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  for (const tab of ['inference', 'training', 'serving', 'collective']) {
    if (tab !== 'inference') await openTab(page, tab);
    const width = await page.evaluate(() => ({
      doc: document.documentElement.scrollWidth,
      body: document.body.scrollWidth,
      view: window.innerWidth,
    }));
    assert.ok(width.doc <= width.view && width.body <= width.view, `${tab}: ${JSON.stringify(width)}`);
  }
  await p.done();
});

// Issue 44: on a phone the first number sat 1,996 px down, under a 1,772 px form. In one column
// the results come first: the first headline number of every tab is on the first screen, and
// the form follows the results.
test('on a 390 x 844 phone every tab shows its first number without scrolling', async () => {
  const p = await openPage('', { width: 390, height: 844 });
  const { page } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  for (const [tab, results, form] of [
    ['inference', '#results', '#setup'],
    ['training', '#tr-results', '#tr-form'],
    ['serving', '#sv-results', '#sv-form'],
    ['collective', '#view-collective .results', '#view-collective .setup'],
  ]) {
    if (tab !== 'inference') await openTab(page, tab);
    const where = await page.evaluate(
      ([r, f]) => {
        const results = document.querySelector(r);
        const number = results.querySelector('.num, .metric-value, td.num');
        return {
          number: number.getBoundingClientRect().bottom,
          results: results.getBoundingClientRect().top,
          form: document.querySelector(f).getBoundingClientRect().top,
        };
      },
      [results, form],
    );
    assert.ok(where.number < 844, `${tab}: the first number ends at ${where.number} px`);
    assert.ok(where.results < where.form, `${tab}: the results come before the form (${JSON.stringify(where)})`);
    // Every tab with bands says once what they are (the collective tab has none).
    const notes = await page.$$eval(`${results} .band-note`, (n) => n.length);
    assert.equal(notes, tab === 'collective' ? 0 : 1, `${tab}: band notes`);
  }
  await p.done();
});

// Issue 44 item 6: at 320 px the charts' 300 px minimum column overflowed the page by 13 px,
// checkboxes were 6-13 px targets and legends, table heads and tags 11-11.7 px text. On every tab:
// nothing wider than the screen, every control at least 24 x 24 px, no page text under 12 px
// (the charts' SVG text, drawn in the chart's own units, is not held to it yet).
test('on a 320 px phone nothing overflows, targets are 24 px and text 12 px', async () => {
  const p = await openPage('', { width: 320, height: 640 });
  const { page } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  for (const tab of ['inference', 'training', 'serving', 'collective']) {
    if (tab !== 'inference') await openTab(page, tab);
    const seen = await page.evaluate(() => {
      const shown = (e) => {
        const b = e.getBoundingClientRect();
        const s = getComputedStyle(e);
        return b.width > 0 && b.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
      };
      const size = (e) =>
        `${Math.round(e.getBoundingClientRect().width)}x${Math.round(e.getBoundingClientRect().height)}`;
      const small = [...document.querySelectorAll('button, input, select, summary, a')]
        .filter(shown)
        .filter((e) => e.getBoundingClientRect().height < 24 || e.getBoundingClientRect().width < 24)
        .map((e) => `${e.tagName.toLowerCase()}#${e.id} ${size(e)}`);
      const tiny = new Set();
      const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      while (walk.nextNode()) {
        const e = walk.currentNode.parentElement;
        if (!walk.currentNode.textContent.trim() || !shown(e) || e.closest('svg')) continue;
        const px = parseFloat(getComputedStyle(e).fontSize);
        if (px < 12) tiny.add(`${e.tagName.toLowerCase()}.${e.className} ${px}px`);
      }
      return { width: document.scrollingElement.scrollWidth, small, tiny: [...tiny] };
    });
    assert.ok(seen.width <= 320, `${tab}: the page is ${seen.width} px wide`);
    assert.deepEqual(seen.small, [], `${tab}: targets under 24 px`);
    assert.deepEqual(seen.tiny, [], `${tab}: text under 12 px`);
  }
  await p.done();
});

// Issue 11: dependent fields blocked instead of adjusting: TP 4 with one GPU was an error, and PP
// back to 1 left 2 virtual stages, an error. A larger layout raises the GPU count to the next
// multiple of TP x PP (training: TP x PP x CP x DP), and PP 1 means one virtual stage.
test('dependent fields adjust: the GPU count follows the layout, PP 1 resets virtual stages', async () => {
  const p = await openPage();
  const { page } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  assert.equal(await page.inputValue('#num_gpus'), '1');
  await page.fill('#tp', '4');
  assert.equal(await page.inputValue('#num_gpus'), '4', 'TP 4 needs 4 GPUs');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.status), 'ready');
  assert.equal((await page.evaluate(() => window.flopcast.request())).num_gpus, 4);
  // 6 GPUs at TP 4 is no whole number of replicas: 8, two replicas.
  await page.fill('#num_gpus', '6');
  await page.fill('#tp', '2');
  await page.fill('#tp', '4');
  assert.equal(await page.inputValue('#num_gpus'), '8');

  await openTab(page, 'training');
  await page.fill('#tr-pp', '2');
  await page.fill('#tr-vpp', '2');
  await page.waitForFunction(() => document.getElementById('view-training').dataset.status === 'ready');
  await page.fill('#tr-pp', '1');
  assert.equal(await page.inputValue('#tr-vpp'), '1');
  await page.waitForFunction(() => document.getElementById('view-training').dataset.status === 'ready');
  // Adjustments start from the count the user chose: TP 3 on 8 GPUs gives 9, TP 2 then 8 again.
  await page.fill('#tr-tp', '3');
  assert.equal(await page.inputValue('#tr-num_gpus'), '9');
  await page.fill('#tr-tp', '2');
  assert.equal(await page.inputValue('#tr-num_gpus'), '8');
  // The default 8 GPUs cannot hold TP 16: 16 GPUs; with DP set, exactly TP x PP x CP x DP.
  await page.fill('#tr-tp', '16');
  assert.equal(await page.inputValue('#tr-num_gpus'), '16');
  await page.fill('#tr-dp', '2');
  await page.fill('#tr-tp', '8');
  assert.equal(await page.inputValue('#tr-num_gpus'), '16', 'TP 8 x DP 2');
  await page.waitForFunction(() => document.getElementById('view-training').dataset.status === 'ready');
  assert.equal((await viewRequest(page, 'training')).num_gpus, 16);
  await p.done();
});

// Issue 11's accessibility findings beyond axe: each results section was an aria-live region of
// ~5,000 characters re-read on every keystroke, 66 field errors were role=alert, hints were not
// tied to their fields, and the tabs had no Home/End.
test('screen readers: one short status line per recompute, quiet field errors, linked hints, Home/End tabs', async () => {
  const p = await openPage();
  const { page } = p;
  await page.waitForFunction(() => document.documentElement.dataset.status === 'ready');
  await page.fill('#batch_size', '4');
  // The headline numbers as shown, one line: "TTFT 12.3 ms, TPOT 6.1 ms, …".
  const line = await page.textContent('#announce');
  const ttft = await page.textContent('#ttft');
  assert.match(line, new RegExp(`^TTFT ${ttft.replace('.', '\\.')} m?s, TPOT `));
  assert.ok(line.length < 200, line);
  await openTab(page, 'training');
  await page.waitForFunction(() => document.getElementById('tr-announce').textContent.length > 0);
  for (const tab of ['inference', 'training']) {
    await page.click(`#tab-${tab}`);
    const a11y = await page.evaluate((t) => {
      const view = document.getElementById(`view-${t}`);
      const describedBy = (c) => (c.getAttribute('aria-describedby') || '').split(/\s+/);
      return {
        live: [...view.querySelectorAll('[aria-live]')].map((e) => e.id),
        alerts: [...view.querySelectorAll('[role=alert]')].map((e) => e.id),
        unlinkedHints: [...view.querySelectorAll('.field > .hint')]
          .filter((h) => {
            const c = h.parentElement.querySelector('input, select, textarea');
            return c && !describedBy(c).includes(h.id);
          })
          .map((h) => h.textContent.slice(0, 40)),
      };
    }, tab);
    assert.deepEqual(a11y.live, [], `${tab}: no aria-live region around the results`);
    assert.ok(
      a11y.alerts.every((id) => id.endsWith('general-error')),
      `${tab}: only the banner is an alert: ${a11y.alerts}`,
    );
    assert.deepEqual(a11y.unlinkedHints, [], `${tab}: every hint describes its field`);
  }
  await page.focus('#tab-training');
  await page.keyboard.press('End');
  assert.equal(await page.evaluate(() => window.flopcastViews.active()), 'collective');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-collective');
  await page.keyboard.press('Home');
  assert.equal(await page.evaluate(() => window.flopcastViews.active()), 'inference');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-inference');
  await p.done();
});
