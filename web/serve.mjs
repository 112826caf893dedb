#!/usr/bin/env node
// Tiny static file server for the flopcast web calculator.
// Uses only node's built-in http/fs/path modules.
//
//   node web/serve.mjs --root DIR --port 8080 [--host 127.0.0.1]
//
// --port 0 picks a free port; the actual URL is printed on start.

import crypto from 'node:crypto';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

function usage(msg) {
  if (msg) process.stderr.write(`serve.mjs: ${msg}\n`);
  process.stderr.write('usage: node web/serve.mjs --root DIR [--port 8080] [--host 127.0.0.1]\n');
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { root: null, port: 8080, host: '127.0.0.1' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf('=');
    const key = eq > 0 ? a.slice(0, eq) : a;
    const next = () => {
      if (eq > 0) return a.slice(eq + 1);
      if (i + 1 >= argv.length) usage(`missing value for ${key}`);
      return argv[++i];
    };
    switch (key) {
      case '--root':
        opts.root = next();
        break;
      case '--port': {
        const v = next();
        if (!/^\d+$/.test(v) || Number(v) > 65535) usage(`invalid port: ${v}`);
        opts.port = Number(v);
        break;
      }
      case '--host':
        opts.host = next();
        break;
      case '-h':
      case '--help':
        usage();
        break;
      default:
        usage(`unknown argument: ${a}`);
    }
  }
  if (!opts.root) usage('--root is required');
  return opts;
}

const opts = parseArgs(process.argv.slice(2));
const root = path.resolve(opts.root);
if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) {
  usage(`root is not a directory: ${root}`);
}
const rootReal = fs.realpathSync(root);

// Sent with every response: the page's own CSP (index.html carries it as a meta tag too) plus
// what a meta tag cannot say: no framing (clickjacking), no MIME sniffing, no referrer. The
// style, image, font and connect sources fall back to default-src 'self': they are not repeated
// (every response carries the header, so its length is paid on each of a load's ~16 requests).
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data:; script-src 'self' 'wasm-unsafe-eval'; object-src 'none'; base-uri 'none'; " +
    "form-action 'none'; frame-ancestors 'none'",
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

// Types worth compressing (text and the module); images already are.
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.wasm', '.json', '.svg', '.txt', '.map']);

// One entry per served file, for its current version (size, mtime): its bytes, a strong ETag
// (SHA-256 of the bytes, its first 128 bits) and its brotli (quality 11: the module goes from 1.7 MB to ~270 KB) and
// gzip forms, each made once, off the event loop (a failed one is null: sent uncompressed). A
// reload revalidates every file (Cache-Control: no-cache) and gets 304s: a few KB.
const cache = new Map();
const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

function entryOf(file, st) {
  const version = `${st.size}:${st.mtimeMs}`;
  let e = cache.get(file);
  if (!e || e.version !== version) {
    const raw = fs.readFileSync(file);
    const compress = COMPRESSIBLE.has(path.extname(file).toLowerCase());
    e = {
      version,
      raw,
      // The first 128 bits of the digest: collision-safe for a validator, 21 bytes shorter on
      // every response than the whole of it.
      etag: `"${crypto.createHash('sha256').update(raw).digest('base64url').slice(0, 22)}"`,
      br: compress
        ? brotli(raw, {
            params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length },
          }).catch(() => null)
        : null,
      gzip: compress ? gzip(raw, { level: 9 }).catch(() => null) : null,
    };
    cache.set(file, e);
  }
  return e;
}

/** The encodings the client accepts with q > 0 ("br;q=0" refuses brotli). */
function accepted(header) {
  const out = new Set();
  for (const part of (header || '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((x) => x.trim()).find((x) => x.startsWith('q='));
    if (name && !(q && Number(q.slice(2)) === 0)) out.add(name);
  }
  return out;
}

/** True when If-None-Match names this ETag (or is "*"); weak validators compare equal too. */
function notModified(header, etag) {
  if (!header) return false;
  return header.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v === etag || v === `W/${etag}`;
  });
}

function send(res, status, body, headers = {}) {
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    ...SECURITY_HEADERS,
    ...headers,
  });
  res.end(body);
}

// Resolve a URL path to a file inside root, or null when it escapes root / is invalid.
function resolvePath(urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const segments = decoded.split('/');
  if (segments.some((s) => s === '..')) return null;
  const full = path.resolve(rootReal, '.' + path.posix.normalize('/' + decoded));
  if (full !== rootReal && !full.startsWith(rootReal + path.sep)) return null;
  return full;
}

const server = http.createServer((req, res) => {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, 'method not allowed\n', { Allow: 'GET, HEAD' });
    return;
  }
  let urlPath;
  try {
    urlPath = new URL(req.url, 'http://localhost').pathname;
  } catch {
    send(res, 400, 'bad request\n');
    return;
  }
  let file = resolvePath(urlPath);
  if (!file) {
    send(res, 404, 'not found\n');
    return;
  }
  fs.stat(file, (err, st) => {
    if (!err && st.isDirectory()) {
      file = path.join(file, 'index.html');
      st = fs.existsSync(file) ? fs.statSync(file) : null;
    } else if (err) {
      st = null;
    }
    if (!st || !st.isFile()) {
      send(res, 404, 'not found\n');
      return;
    }
    // Refuse symlinks pointing outside root.
    let real;
    try {
      real = fs.realpathSync(file);
    } catch {
      send(res, 404, 'not found\n');
      return;
    }
    if (real !== rootReal && !real.startsWith(rootReal + path.sep)) {
      send(res, 404, 'not found\n');
      return;
    }
    const type = MIME[path.extname(real).toLowerCase()] || 'application/octet-stream';
    let e;
    try {
      e = entryOf(real, st);
    } catch {
      send(res, 404, 'not found\n');
      return;
    }
    const common = { 'Content-Type': type, ETag: e.etag, Vary: 'Accept-Encoding', ...SECURITY_HEADERS };
    if (notModified(req.headers['if-none-match'], e.etag)) {
      res.writeHead(304, common);
      res.end();
      return;
    }
    const encodings = accepted(req.headers['accept-encoding']);
    const pick = e.br && encodings.has('br') ? ['br', e.br] : e.gzip && encodings.has('gzip') ? ['gzip', e.gzip] : null;
    Promise.resolve(pick ? pick[1] : null).then((packed) => {
      const body = packed || e.raw;
      res.writeHead(200, {
        ...common,
        ...(packed ? { 'Content-Encoding': pick[0] } : {}),
        'Content-Length': body.length,
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    });
  });
});

// A request Node cannot parse (a bad request line, oversized headers) never reaches the handler:
// Node answers it with a bare 400. Answer it here instead, with the same headers as every other
// response (issue 46).
server.on('clientError', (err, socket) => {
  if (!socket.writable || err.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const status = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
  const head = Object.entries({ 'Content-Type': 'text/plain; charset=utf-8', ...SECURITY_HEADERS, Connection: 'close' })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${status}\r\n${head}Content-Length: 12\r\n\r\nbad request\n`);
});

server.on('error', (err) => {
  process.stderr.write(`serve.mjs: ${err.message}\n`);
  process.exit(1);
});

// Compress the site's files while the first page loads (brotli 11 takes ~3 s for the module).
function warm(dir) {
  for (const d of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, d.name);
    if (d.isDirectory()) warm(full);
    else if (d.isFile()) entryOf(full, fs.statSync(full));
  }
}

server.listen(opts.port, opts.host, () => {
  try {
    warm(rootReal);
  } catch {
    // a file that vanished or cannot be read is served (or refused) when asked for
  }
  const { port } = server.address();
  const shownHost = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  process.stdout.write(`flopcast web calculator: http://${shownHost}:${port}/\n`);
});

for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
