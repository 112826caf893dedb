// SPDX-License-Identifier: MIT
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const siteDir = path.resolve(process.env.FLOPCAST_SITE_DIR ?? path.join(repoRoot, 'build/wasm-release/site'));

/**
 * Loads build/<preset>/site/flopcast.mjs under Node. Emscripten 3.1.6's ES6 output reads
 * `__dirname` and `require("fs")` in its Node branch, neither of which exists in an ES module,
 * and Node 20's fetch() cannot load a file path: when the plain load fails, both are provided and
 * the wasm bytes are handed over directly.
 */
export async function loadFlopcast(dir = siteDir) {
  const modulePath = path.join(dir, 'flopcast.mjs');
  const { default: createFlopcast } = await import(pathToFileURL(modulePath).href);
  try {
    return await createFlopcast();
  } catch {
    globalThis.__dirname ??= dir;
    globalThis.require ??= createRequire(modulePath);
    return await createFlopcast({ wasmBinary: readFileSync(path.join(dir, 'flopcast.wasm')) });
  }
}
