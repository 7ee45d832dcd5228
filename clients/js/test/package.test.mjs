// What `npm pack` ships: the package's own README, its sources and package.json, nothing else (no tests, no
// node_modules). The issue promises an installable package with its own README.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const root = new URL('..', import.meta.url).pathname;

test('npm pack ships README.md, LICENSE, package.json and src/ (declarations included) only', () => {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--loglevel=error'], { cwd: root, encoding: 'utf8' });
  const [pack] = JSON.parse(out);
  const files = pack.files.map((f) => f.path).sort();
  assert.ok(files.includes('README.md'), files.join(' '));
  assert.ok(files.includes('package.json'));
  assert.ok(files.includes('src/index.js'));
  assert.ok(files.includes('src/index.d.ts'));
  assert.ok(files.includes('LICENSE'));
  assert.match(readFileSync(new URL('../LICENSE', import.meta.url), 'utf8'), /Apache License\s+Version 2\.0/);
  assert.deepEqual(files.filter((f) => !['README.md', 'LICENSE', 'package.json'].includes(f) && !f.startsWith('src/')), []);
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  assert.equal(pkg.repository.url, 'git+https://github.com/payguard/payguard.git');
  assert.equal(pkg.exports['.'].types, './src/index.d.ts');
  assert.match(readFileSync(new URL('../README.md', import.meta.url), 'utf8'), /^# @payguard\/guard/);
  // Every module the entry point imports is shipped.
  for (const m of readFileSync(new URL('../src/index.js', import.meta.url), 'utf8').matchAll(/from '\.\/([^']+)'/g)) {
    assert.ok(files.includes(`src/${m[1]}`), m[1]);
  }
});
