// openssl for test certificates: a throw-away CA and certificates it signs (server or client,
// chosen by the extension file), so the TLS helpers of the suite share one way of making them.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from './daemon.ts';

export async function openssl(args: string[], cwd: string): Promise<void> {
  const r = await run('openssl', args, { cwd });
  if (r.code !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${r.stderr}`);
}

/** A self-signed CA, valid two days, in `dir/<cert>` and `dir/<key>`. */
export async function makeCa(dir: string, cert: string, key: string, cn: string): Promise<void> {
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${cn}`], dir);
}

export interface SignedCert {
  /** CA certificate and key file names in the directory. */
  ca: { cert: string; key: string };
  cn: string;
  /** Output names (relative to the directory). */
  cert: string;
  key: string;
  /** Extension lines (subjectAltName, extendedKeyUsage). */
  ext: string;
}

/** A key, a request and the CA's signature over it (valid two days), with the given extensions. */
export async function signCert(dir: string, c: SignedCert): Promise<void> {
  const base = c.cert.replace(/[^a-zA-Z0-9]/g, '_');
  const csr = `${base}.csr`;
  const ext = `${base}.ext`;
  await writeFile(join(dir, ext), c.ext);
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', c.key, '-out', csr, '-subj', `/CN=${c.cn}`], dir);
  await openssl(
    ['x509', '-req', '-in', csr, '-CA', c.ca.cert, '-CAkey', c.ca.key, '-CAcreateserial', '-out', c.cert, '-days', '2', '-extfile', ext],
    dir,
  );
}

/**
 * Whether `openssl verify` accepts the first certificate of `chainPem` against `rootPem`, the rest
 * of the chain (or the root itself when there is none) given as untrusted intermediates.
 */
export function opensslVerifies(rootPem: string, chainPem: string, purpose?: string): boolean {
  const certs = chainPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g) ?? [];
  const dir = mkdtempSync(join(tmpdir(), 'verify-'));
  try {
    writeFileSync(join(dir, 'root.pem'), rootPem);
    writeFileSync(join(dir, 'leaf.pem'), certs[0] ?? '');
    writeFileSync(join(dir, 'chain.pem'), certs.slice(1).join('') || rootPem);
    const args = [
      'verify',
      ...(purpose ? ['-purpose', purpose] : []),
      '-CAfile',
      join(dir, 'root.pem'),
      '-untrusted',
      join(dir, 'chain.pem'),
      join(dir, 'leaf.pem'),
    ];
    execFileSync('openssl', args, { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
