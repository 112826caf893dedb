// Runs one request off the page's thread with its own instance of the WebAssembly module: a
// serving simulation (mode "simulate") or a setup search (task "search"), so the page stays
// responsive and Cancel can end the run by terminating this worker. Messages: in {wasmModule}
// first (the page's compiled module, instantiated here without a download or a compile; null:
// fetch it), then {id, request: JSON text}; out {id, out: envelope JSON text, ms}.
import createFlopcast from './flopcast.mjs';
import { moduleOptions } from './ui.js';

let ready = null;

self.onmessage = async (e) => {
  if ('wasmModule' in e.data) {
    ready = createFlopcast(moduleOptions(e.data.wasmModule));
    return;
  }
  ready ??= createFlopcast();
  const { id, request } = e.data;
  let out;
  const t0 = performance.now();
  try {
    out = (await ready).estimate(request);
  } catch (err) {
    out = JSON.stringify({
      ok: false,
      error: { code: 'worker', path: '', message: String((err && err.message) || err) },
    });
  }
  self.postMessage({ id, out, ms: performance.now() - t0 });
};
