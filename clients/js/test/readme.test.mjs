// The README's examples as written: the TypeScript example is type-checked with `tsc --strict` against the
// shipped declarations and the SDK's own, compiled, and run against local sellers (the official SDK signs for
// real; the seller counts what lands); its output must be the output the README shows. The declarations are
// also checked on their own, and the package is loaded from CommonJS with require().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { BUYER_KEY, challenge } from './helpers.mjs';

const root = new URL('..', import.meta.url).pathname;
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/** block returns the fenced code block of `lang` that follows `after` in the README. */
function block(lang, after) {
  const from = readme.indexOf(after);
  assert.ok(from >= 0, `README has no "${after}"`);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(readme.slice(from));
  assert.ok(m, `no ${lang} block after "${after}"`);
  return m[1];
}

/** A temporary directory inside the package, so that the example imports '@payguard/guard' by its own name. */
function scratch(t) {
  const dir = fs.mkdtempSync(path.join(root, '.readme-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function runTsc(args, cwd) {
  const r = spawnSync(process.execPath, [tsc, ...args], { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `tsc ${args.join(' ')}:\n${r.stdout}${r.stderr}`);
}

function run(cmd, args, opts) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    child.stdout.on('data', (c) => { stdout += c; });
    child.stderr.on('data', (c) => { stderr += c; });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

async function sellers() {
  const prices = { '/cheap': 10_000, '/pricey': 750_000, '/mid': 200_000 };
  const paid = [];
  const server = http.createServer((req, res) => {
    const payment = req.headers['payment-signature'];
    if (payment) {
      paid.push(JSON.parse(Buffer.from(payment, 'base64').toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"data":"ok"}');
      return;
    }
    const ch = challenge(prices[req.url] ?? 10_000, { url: `https://api.example${req.url}` });
    res.writeHead(402, { 'payment-required': Buffer.from(JSON.stringify(ch)).toString('base64') });
    res.end('{}');
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}`, paid, close: () => new Promise((r) => server.close(r)) };
}

test('README: the TypeScript example passes tsc --strict, runs, and prints what the README says', async (t) => {
  const dir = scratch(t);
  fs.writeFileSync(path.join(dir, 'example.mts'), block('ts', '## Use'));
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      strict: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', outDir: 'out',
      // The SDK's and viem's own declarations are used, not re-checked (they are theirs); ours are checked below.
      skipLibCheck: true, types: ['node'], rootDir: '.',
    },
    files: ['example.mts'],
  }));
  runTsc(['-p', 'tsconfig.json'], dir);
  const s = await sellers();
  try {
    // Asynchronously: the sellers answer from this process's event loop.
    const r = await run(process.execPath, ['--import', path.join(root, 'test', 'readme-fetch.mjs'), path.join(dir, 'out', 'example.mjs')], {
      cwd: dir, env: { ...process.env, AGENT_PRIVATE_KEY: BUYER_KEY, PAYGUARD_README_SELLER: s.url },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, block('text', 'it prints:'));
    assert.equal(s.paid.length, 1); // the cheap one, signed by the official SDK
    assert.equal(s.paid[0].accepted.amount, '10000');
  } finally {
    await s.close();
  }
});

test('the shipped declarations pass tsc --strict on their own', (t) => {
  const dir = scratch(t);
  fs.writeFileSync(path.join(dir, 'use.mts'), [
    "import { createGuard, verifyReceipt, PaymentRefusedError, type DecisionEvent } from '@payguard/guard';",
    "const g = createGuard({ rules: { dailyCapUsd: '10', domainBlocklist: ['evil.example'] }, onDecision: (e: DecisionEvent) => JSON.stringify(e) });",
    "const day: string = g.spent().day;",
    "const err = new PaymentRefusedError({ decision: 'block', reasons: ['block: x'] });",
    "const kinds: ('allow' | 'hold' | 'block')[] = [err.decision];",
    "try { verifyReceipt('x.y.z', { keys: [] }, { now: new Date(), maxAgeSeconds: 60 }); } catch { /* expected */ }",
    'export { day, kinds };',
  ].join('\n'));
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', types: [] },
    files: ['use.mts', '../src/index.d.ts'],
  }));
  runTsc(['-p', 'tsconfig.json'], dir);
});

test('the README quotes the official SDK\'s own refusal above $1', async () => {
  const { x402Client, x402HTTPClient } = await import('@x402/fetch');
  const { registerExactEvmScheme } = await import('@x402/evm/exact/client');
  const { privateKeyToAccount } = await import('viem/accounts');
  const client = new x402Client(); // its default spend controls
  registerExactEvmScheme(client, { signer: privateKeyToAccount(BUYER_KEY) });
  let message = '';
  try {
    await new x402HTTPClient(client).createPaymentPayload(challenge(5_000_000));
  } catch (e) {
    message = e.message;
  }
  const quoted = /`Failed to create payment payload: (All payment requirements [^`]*?)\. \.\.\.`/.exec(readme.replace(/\n\s*/g, ' '));
  assert.ok(quoted, 'README quotes the SDK refusal');
  assert.ok(message.startsWith(quoted[1]), `SDK said: ${message}`);
});

test('CommonJS: require() loads the package by name where Node loads ES modules synchronously', (t) => {
  const [major, minor] = process.versions.node.split('.').map(Number);
  const syncESM = (major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22;
  assert.ok(syncESM || major < 22, `the README's claim does not cover Node ${process.versions.node}`);
  const dir = scratch(t);
  const file = path.join(dir, 'use.cjs');
  fs.writeFileSync(file, "const g = require('@payguard/guard'); console.log(typeof g.guard, typeof g.PaymentRefusedError, typeof g.verifyReceipt);\n");
  const r = spawnSync(process.execPath, [file], { encoding: 'utf8' });
  if (syncESM) {
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'function function function');
  } else {
    assert.match(r.stderr, /ERR_REQUIRE_ESM/); // what the README says: use import() there
  }
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  assert.equal(pkg.engines.node, '>=20.18.1');
});
