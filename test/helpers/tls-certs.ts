// A throw-away CA with a server certificate (for 127.0.0.1/localhost) and a client certificate,
// made with openssl, laid out as the docker CLI expects in DOCKER_CERT_PATH (ca.pem, cert.pem, key.pem).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from './daemon.ts';

export interface TestCerts {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientDir: string;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  const r = await run('openssl', args, { cwd });
  if (r.code !== 0) throw new Error(`openssl ${args.join(' ')} failed: ${r.stderr}`);
}

export async function makeCerts(dir: string): Promise<TestCerts> {
  await mkdir(dir, { recursive: true });
  const clientDir = join(dir, 'client');
  await mkdir(clientDir, { recursive: true });
  await openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca-key.pem',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=engine-test-ca',
    ],
    dir,
  );
  await writeFile(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  await writeFile(join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server-key.pem', '-out', 'server.csr', '-subj', '/CN=localhost'], dir);
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-out',
      'server-cert.pem',
      '-days',
      '2',
      '-extfile',
      'server.ext',
    ],
    dir,
  );
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'client/key.pem', '-out', 'client.csr', '-subj', '/CN=client'], dir);
  await openssl(
    [
      'x509',
      '-req',
      '-in',
      'client.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-CAcreateserial',
      '-out',
      'client/cert.pem',
      '-days',
      '2',
      '-extfile',
      'client.ext',
    ],
    dir,
  );
  await openssl(['x509', '-in', 'ca.pem', '-out', 'client/ca.pem'], dir);
  return { dir, ca: join(dir, 'ca.pem'), serverCert: join(dir, 'server-cert.pem'), serverKey: join(dir, 'server-key.pem'), clientDir };
}
