// Running the harness's own programs (facilitator, sellers, buyer) as child processes, the way the Go
// examples and a person at a shell use them.

import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** LIB is this directory: the place of facilitator.mjs, seller-v1.mjs, seller-v2.mjs and buyer.mjs. */
export const LIB = path.dirname(fileURLToPath(import.meta.url));

/**
 * spawnReady starts `node <LIB>/<script> …args` and resolves when it prints its JSON line with ready:true,
 * to {proc, ready, output(), stop()}. It rejects with the output if the process exits first or stays
 * silent for timeoutMs.
 */
export function spawnReady(script, args = [], { timeoutMs = 30000, env = {} } = {}) {
  const proc = spawn(process.execPath, [path.join(LIB, script), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stderr.on('data', (c) => { err += c; });
  const exit = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`${script}: no ready line within ${timeoutMs} ms\n${out}${err}`)); }, timeoutMs);
    const early = (code) => { clearTimeout(timer); reject(new Error(`${script} exited with ${code} before it was ready\n${out}${err}`)); };
    proc.once('exit', early);
    proc.stdout.on('data', (c) => {
      out += c;
      for (const line of out.split('\n')) {
        let msg;
        try {
          msg = JSON.parse(line);
        } catch {
          continue;
        }
        if (msg?.ready === true) {
          clearTimeout(timer);
          proc.removeListener('exit', early);
          resolve({
            proc,
            ready: msg,
            output: () => out + err,
            async stop() {
              if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
              return exit;
            },
          });
          return;
        }
      }
    });
  });
}

/** runNode runs `node <LIB>/<script> …args` to completion and resolves to {code, stdout, stderr}. */
export function runNode(script, args = [], { env = {} } = {}) {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [path.join(LIB, script), ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c) => { stdout += c; });
    proc.stderr.on('data', (c) => { stderr += c; });
    proc.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
