/**
 * Serving certificates for the local webhook server. The API server calls
 * webhooks over TLS and checks the certificate against the webhook
 * configuration's `caBundle`, so a local run needs a CA and a serving
 * certificate for 127.0.0.1 / localhost. They are generated once into a
 * directory and reused while valid.
 */
import { generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import forge from 'node-forge';

export interface ServingTls {
  /** PEM of the CA that signed the serving certificate: the webhooks' caBundle. */
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** How long a generated certificate lives; regenerated when less than a day is left. */
const VALIDITY_DAYS = 365;
const RENEW_BEFORE_MS = 24 * 60 * 60 * 1000;

function rsaKeys(): { publicKeyPem: string; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKeyPem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
  };
}

function certificate(options: {
  subject: string;
  publicKeyPem: string;
  signerKeyPem: string;
  issuer?: forge.pki.Certificate;
  extensions: object[];
}): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(options.publicKeyPem);
  // DER INTEGERs must be minimal and positive: a first byte of 0x40-0x7f is
  // neither negative nor padded. (A leading "0" on an odd-length hex string
  // made OpenSSL reject some certificates with "illegal padding".)
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x3f) | 0x40;
  cert.serialNumber = serial.toString('hex');
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 60_000);
  cert.validity.notAfter = new Date(now + VALIDITY_DAYS * 24 * 60 * 60 * 1000);
  const subject = [{ name: 'commonName', value: options.subject }];
  cert.setSubject(subject);
  cert.setIssuer(options.issuer ? options.issuer.subject.attributes : subject);
  cert.setExtensions(options.extensions);
  cert.sign(forge.pki.privateKeyFromPem(options.signerKeyPem), forge.md.sha256.create());
  return cert;
}

/** A new CA and a serving certificate for 127.0.0.1 and localhost signed by it. */
export function generateServingTls(): ServingTls {
  const caKeys = rsaKeys();
  const ca = certificate({
    subject: 'serverless-sidecarset local CA',
    publicKeyPem: caKeys.publicKeyPem,
    signerKeyPem: caKeys.privateKeyPem,
    extensions: [
      { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const leafKeys = rsaKeys();
  const leaf = certificate({
    subject: '127.0.0.1',
    publicKeyPem: leafKeys.publicKeyPem,
    signerKeyPem: caKeys.privateKeyPem,
    issuer: ca,
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, { type: 2, value: 'localhost' }] },
    ],
  });
  return { caPem: forge.pki.certificateToPem(ca), certPem: forge.pki.certificateToPem(leaf), keyPem: leafKeys.privateKeyPem };
}

function stillValid(tls: ServingTls): boolean {
  try {
    const cert = new X509Certificate(tls.certPem);
    const ca = new X509Certificate(tls.caPem);
    return (
      cert.verify(ca.publicKey) &&
      cert.checkIP('127.0.0.1') !== undefined &&
      Date.parse(cert.validTo) - Date.now() > RENEW_BEFORE_MS &&
      Date.parse(ca.validTo) - Date.now() > RENEW_BEFORE_MS
    );
  } catch {
    return false;
  }
}

export const CA_FILE = 'ca.crt';
export const CERT_FILE = 'tls.crt';
export const KEY_FILE = 'tls.key';

/**
 * The serving TLS kept in `dir` (ca.crt, tls.crt, tls.key), generated when
 * missing, unreadable or about to expire. Returns it and whether it is new.
 */
export async function ensureServingTls(dir: string): Promise<ServingTls & { generated: boolean }> {
  try {
    const existing = {
      caPem: await readFile(join(dir, CA_FILE), 'utf8'),
      certPem: await readFile(join(dir, CERT_FILE), 'utf8'),
      keyPem: await readFile(join(dir, KEY_FILE), 'utf8'),
    };
    if (stillValid(existing)) return { ...existing, generated: false };
  } catch {
    // Missing or unreadable: generate below.
  }
  const tls = generateServingTls();
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // Write-then-rename so a concurrent reader never sees half a key.
  for (const [name, text, mode] of [
    [KEY_FILE, tls.keyPem, 0o600],
    [CERT_FILE, tls.certPem, 0o644],
    [CA_FILE, tls.caPem, 0o644],
  ] as const) {
    const tmp = join(dir, `.${name}.${process.pid}.tmp`);
    await writeFile(tmp, text, { mode });
    await rename(tmp, join(dir, name));
  }
  return { ...tls, generated: true };
}
