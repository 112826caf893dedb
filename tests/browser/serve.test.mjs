// Tests of web/serve.mjs, the static file server used to run the web page.
// Needs no browser and no build: it serves a temporary folder.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
let tmp;
let root;
let server;
let base;

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'flopcast-serve-'));
  root = path.join(tmp, 'site');
  fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
  fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>x</title>');
  fs.writeFileSync(path.join(root, 'app.js'), 'export {};');
  fs.writeFileSync(path.join(root, 'm.mjs'), 'export {};');
  fs.writeFileSync(path.join(root, 'style.css'), 'body{}');
  fs.writeFileSync(path.join(root, 'big.js'), 'export const x = 1;\n'.repeat(2000));
  fs.writeFileSync(path.join(root, 'flopcast.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
  fs.writeFileSync(path.join(root, 'p.json'), '{}');
  fs.writeFileSync(path.join(root, 'i.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  fs.writeFileSync(path.join(root, 'i.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  fs.writeFileSync(path.join(root, 'sub', 'index.html'), 'sub');
  fs.writeFileSync(path.join(tmp, 'secret.txt'), 'do not serve');
  fs.symlinkSync(path.join(tmp, 'secret.txt'), path.join(root, 'link.txt'));

  server = spawn(
    process.execPath,
    [path.join(repoRoot, 'web', 'serve.mjs'), '--root', root, '--port', '0', '--host', '127.0.0.1'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  base = await new Promise((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/^flopcast web calculator: (http:\/\/127\.0\.0\.1:(\d+)\/)$/m);
      if (m) {
        assert.notEqual(m[2], '0', 'the actual port is printed');
        resolve(m[1]);
      }
    });
    server.on('exit', (code) => reject(new Error(`serve.mjs exited with ${code}`)));
  });
});

after(() => {
  if (server) {
    server.removeAllListeners('exit');
    server.kill('SIGTERM');
  }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// Raw GET so that paths like /../x reach the server unnormalised.
function get(rawPath, headers = {}) {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: rawPath, method: 'GET', headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        resolve({
          status: res.statusCode,
          type: res.headers['content-type'],
          headers: res.headers,
          bytes,
          body: bytes.toString(),
        });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

// Issue 12: the CSP was a meta tag only (no frame-ancestors: the page could be framed) and the
// server sent no X-Frame-Options or Referrer-Policy.
test('every response carries the security headers', async () => {
  for (const p of ['/', '/app.js', '/flopcast.wasm', '/no-such-file', '/../secret.txt']) {
    const r = await get(p);
    assert.match(r.headers['content-security-policy'] ?? '', /frame-ancestors 'none'/, p);
    assert.match(r.headers['content-security-policy'], /default-src 'self'/, p);
    assert.equal(r.headers['x-frame-options'], 'DENY', p);
    assert.equal(r.headers['x-content-type-options'], 'nosniff', p);
    assert.equal(r.headers['referrer-policy'], 'no-referrer', p);
  }
});

// Issue 46: a request Node cannot parse got Node's own 400, without the security headers.
test('a malformed request gets a 400 with the security headers', async () => {
  const net = await import('node:net');
  const u = new URL(base);
  const reply = await new Promise((resolve, reject) => {
    const socket = net.connect(Number(u.port), u.hostname, () => socket.write('GET / HTTP/1.1\r\nBad Header\r\n\r\n'));
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
  assert.match(reply, /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.match(reply, /\r\nContent-Security-Policy: default-src 'self'.*frame-ancestors 'none'\r\n/);
  assert.match(reply, /\r\nX-Frame-Options: DENY\r\n/);
  assert.match(reply, /\r\nX-Content-Type-Options: nosniff\r\n/);
  assert.match(reply, /\r\nReferrer-Policy: no-referrer\r\n/);
  assert.match(reply, /\r\n\r\nbad request\n$/);
});

test('serves files with the right MIME types', async () => {
  const cases = {
    '/': 'text/html',
    '/index.html': 'text/html',
    '/app.js': 'text/javascript',
    '/m.mjs': 'text/javascript',
    '/style.css': 'text/css',
    '/flopcast.wasm': 'application/wasm',
    '/p.json': 'application/json',
    '/i.svg': 'image/svg+xml',
    '/i.png': 'image/png',
    '/sub/': 'text/html',
    '/index.html?x=1': 'text/html',
  };
  for (const [p, type] of Object.entries(cases)) {
    const r = await get(p);
    assert.equal(r.status, 200, p);
    assert.ok(r.type.startsWith(type), `${p}: ${r.type}`);
  }
  assert.equal((await get('/sub/')).body, 'sub');
});

test('404 for missing files, traversal and links leaving the root', async () => {
  for (const p of [
    '/nope.html',
    '/../secret.txt',
    '/%2e%2e/secret.txt',
    '/sub/..%2f..%2fsecret.txt',
    '/..%5csecret.txt',
    '/link.txt',
    '/%00',
    '/%E0%A4%A',
  ]) {
    const r = await get(p);
    assert.equal(r.status, 404, `${p} -> ${r.status}`);
    assert.ok(!r.body.includes('do not serve'), p);
  }
});

// Issue 11: a reload sent every byte again and nothing was compressed (the 1.7 MB module each
// time). Files now carry a strong ETag, a matching If-None-Match gets a 304 without a body, and
// text and the module go out as brotli or gzip, whichever the client accepts.
test('ETags make a reload a 304 without a body', async () => {
  const first = await get('/big.js');
  assert.equal(first.status, 200);
  const etag = first.headers.etag;
  assert.match(etag, /^"[A-Za-z0-9_-]{22}"$/); // the first 128 bits of SHA-256, base64url
  assert.equal(first.headers['cache-control'], 'no-cache');
  const again = await get('/big.js', { 'If-None-Match': etag });
  assert.equal(again.status, 304);
  assert.equal(again.bytes.length, 0);
  assert.equal(again.headers.etag, etag);
  assert.equal(again.headers['x-frame-options'], 'DENY');
  assert.equal((await get('/big.js', { 'If-None-Match': `"other", W/${etag}` })).status, 304);
  assert.equal((await get('/big.js', { 'If-None-Match': '"other"' })).status, 200);
  // A file changed on disk gets a new ETag: the old one no longer matches.
  const file = path.join(root, 'p.json');
  const before = (await get('/p.json')).headers.etag;
  fs.writeFileSync(file, '{"changed": true}');
  fs.utimesSync(file, new Date(), new Date(Date.now() + 5000));
  const after = await get('/p.json', { 'If-None-Match': before });
  assert.equal(after.status, 200);
  assert.notEqual(after.headers.etag, before);
  assert.equal(after.body, '{"changed": true}');
});

test('text and the module are sent compressed as the client accepts', async () => {
  const plain = (await get('/big.js')).bytes;
  assert.equal(plain.length, 40000); // 2,000 lines of 20 bytes
  const br = await get('/big.js', { 'Accept-Encoding': 'gzip, deflate, br' });
  assert.equal(br.headers['content-encoding'], 'br');
  assert.equal(br.headers.vary, 'Accept-Encoding');
  assert.ok(br.bytes.length < 200, `brotli of a repeated line: ${br.bytes.length} bytes`);
  assert.equal(Number(br.headers['content-length']), br.bytes.length);
  assert.deepEqual(zlib.brotliDecompressSync(br.bytes), plain);
  const gz = await get('/big.js', { 'Accept-Encoding': 'gzip, br;q=0' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.deepEqual(zlib.gunzipSync(gz.bytes), plain);
  const wasm = await get('/flopcast.wasm', { 'Accept-Encoding': 'br' });
  assert.equal(wasm.headers['content-encoding'], 'br');
  assert.deepEqual(zlib.brotliDecompressSync(wasm.bytes), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]));
  const png = await get('/i.png', { 'Accept-Encoding': 'br, gzip' });
  assert.equal(png.headers['content-encoding'], undefined);
  assert.equal(png.bytes.length, 4);
  const none = await get('/big.js', { 'Accept-Encoding': 'identity' });
  assert.equal(none.headers['content-encoding'], undefined);
  assert.equal(none.bytes.length, 40000);
});
