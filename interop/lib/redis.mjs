// The Redis the interop suite's fleet tests share: the same choice the Go tests make (package
// internal/testredis): PAYGUARD_TEST_REDIS_URL, else the real Redis at 127.0.0.1:6379 (CI starts one), else
// redis-server from PATH on a free port, else an embedded Redis-compatible server with a printed notice.
// The helper process (internal/testredis/cmd/testredis) keeps what it started alive until this process ends.

import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './payguard.mjs';

const execFileP = promisify(execFile);
let chosen;

/** testRedis resolves to {url, kind, notice}, once per process. */
export function testRedis() {
  chosen ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'payguard-testredis-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    const bin = path.join(dir, 'testredis');
    await execFileP('go', ['build', '-o', bin, './internal/testredis/cmd/testredis'], { cwd: REPO_ROOT, maxBuffer: 16 << 20 });
    // stdin stays open as long as this process lives: the helper exits when it closes.
    const proc = spawn(bin, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    proc.unref();
    proc.stdout.unref?.();
    process.once('exit', () => proc.kill());
    const line = await new Promise((resolve, reject) => {
      let buf = '';
      proc.stdout.on('data', (d) => {
        buf += d;
        const nl = buf.indexOf('\n');
        if (nl >= 0) resolve(buf.slice(0, nl));
      });
      proc.once('exit', (code) => reject(new Error(`testredis exited with ${code} before answering`)));
    });
    return JSON.parse(line); // the helper has printed its choice (and any notice) on our stderr

  })();
  return chosen;
}
