// A throw-away CA with a server certificate (for 127.0.0.1/localhost) and a client certificate,
// made with openssl, laid out as the docker CLI expects in DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem).
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { makeCa, openssl, signCert } from './openssl.ts';

export interface TestCerts {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientDir: string;
}

export async function makeCerts(dir: string): Promise<TestCerts> {
  await mkdir(dir, { recursive: true });
  const clientDir = join(dir, 'client');
  await mkdir(clientDir, { recursive: true });
  await makeCa(dir, 'ca.pem', 'ca-key.pem', 'engine-test-ca');
  const ca = { cert: 'ca.pem', key: 'ca-key.pem' };
  const serverExt = 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n';
  await signCert(dir, { ca, cn: 'localhost', cert: 'server-cert.pem', key: 'server-key.pem', ext: serverExt });
  await signCert(dir, { ca, cn: 'client', cert: 'client/cert.pem', key: 'client/key.pem', ext: 'extendedKeyUsage=clientAuth\n' });
  await openssl(['x509', '-in', 'ca.pem', '-out', 'client/ca.pem'], dir);
  return { dir, ca: join(dir, 'ca.pem'), serverCert: join(dir, 'server-cert.pem'), serverKey: join(dir, 'server-key.pem'), clientDir };
}

/** Daemon arguments for a TCP listener on 127.0.0.1:port that verifies client certificates of `certs`' CA. */
export function tlsDaemonArgs(certs: TestCerts, port: number): string[] {
  return [
    '-H',
    `tcp://127.0.0.1:${port}`,
    '--tlsverify',
    '--tlscacert',
    certs.ca,
    '--tlscert',
    certs.serverCert,
    '--tlskey',
    certs.serverKey,
  ];
}
