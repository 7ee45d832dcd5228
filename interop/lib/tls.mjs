// Test PKI for HTTPS sellers: a throwaway ECDSA P-256 CA and a leaf for 127.0.0.1/localhost, made with the
// openssl command line at test time (nothing is committed). payguard trusts the CA as an extra upstream root;
// the buyer trusts payguard's own MITM CA.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function openssl(args, cwd) {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    throw new Error(`openssl ${args[0]} failed: ${err.stderr?.toString().trim() || err.message}`);
  }
}

/**
 * makeTestPKI writes ca.pem, ca-key.pem, leaf.pem and leaf-key.pem into dir and returns their paths and PEM
 * contents: {caFile, caPem, certFile, cert, keyFile, key}. The leaf names IP 127.0.0.1 and DNS localhost.
 */
export function makeTestPKI(dir, { cn = 'payguard interop test CA' } = {}) {
  fs.mkdirSync(dir, { recursive: true });
  const curve = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(['req', '-x509', ...curve, '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', '2', '-subj', `/CN=${cn}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], dir);
  openssl(['req', ...curve, '-keyout', 'leaf-key.pem', '-out', 'leaf.csr', '-subj', '/CN=127.0.0.1'], dir);
  fs.writeFileSync(path.join(dir, 'leaf.ext'), [
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature',
    'extendedKeyUsage=serverAuth',
    '',
  ].join('\n'));
  openssl(['x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial',
    '-out', 'leaf.pem', '-days', '2', '-extfile', 'leaf.ext'], dir);
  const file = (n) => path.join(dir, n);
  return {
    caFile: file('ca.pem'),
    caKeyFile: file('ca-key.pem'),
    caPem: fs.readFileSync(file('ca.pem'), 'utf8'),
    certFile: file('leaf.pem'),
    cert: fs.readFileSync(file('leaf.pem'), 'utf8'),
    keyFile: file('leaf-key.pem'),
    key: fs.readFileSync(file('leaf-key.pem'), 'utf8'),
  };
}
