// SPDX-License-Identifier: MIT
// What every browser test file needs: the staged site, web/serve.mjs on a free port, the system
// Chromium through playwright-core (never a downloaded browser), screenshots on request, and the
// end of loading.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const siteDir = path.resolve(repoRoot, process.env.FLOPCAST_SITE_DIR || 'build/wasm-release/site');
const chromiumPath = process.env.FLOPCAST_CHROMIUM || '/usr/bin/chromium';
const SCREENSHOT_DIR = process.env.FLOPCAST_SCREENSHOT_DIR || '';

export const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

function startServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'web', 'serve.mjs'), '--root', siteDir, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`serve.mjs did not start: ${out}${err}`)), 10000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/flopcast web calculator: (http:\/\/\S+\/)/);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] });
      }
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve.mjs exited with ${code}: ${err}`));
    });
  });
}

/**
 * Checks that the site holds `files`, serves it and launches Chromium.
 * Returns {baseUrl, browser, close()}.
 */
export async function startSite(files) {
  for (const f of files) {
    assert.ok(
      fs.existsSync(path.join(siteDir, f)),
      `${path.join(siteDir, f)} is missing: build the site first (cmake --workflow --preset wasm-release) or set FLOPCAST_SITE_DIR`,
    );
  }
  const { child: server, url: baseUrl } = await startServer();
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    baseUrl,
    browser,
    async close() {
      await browser.close();
      server.removeAllListeners('exit');
      server.kill('SIGTERM');
    },
  };
}

/** A full-page screenshot into FLOPCAST_SCREENSHOT_DIR, when it is set. */
export async function shot(page, name) {
  if (SCREENSHOT_DIR) await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** Waits until the page (and the simulator's worker, which loads with it) makes no new request
 * for half a second: the end of loading. */
export async function settle(requests) {
  for (let seen = -1; seen !== requests.length;) {
    seen = requests.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
