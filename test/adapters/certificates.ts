/**
 * Certificates for the TLS tests: a CA, and leaves it signs for a client
 * (clientAuth, the Kubernetes user as its common name) or a server. Real
 * X.509, checked by real OpenSSL handshakes, not mocks.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface Pems {
  certPem: string;
  keyPem: string;
}

function keys(): { publicKeyPem: string; privateKeyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privateKeyPem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
  };
}

function sign(subject: string, publicKeyPem: string, signerKeyPem: string, issuer: forge.pki.Certificate | undefined, extensions: object[], organizations: readonly string[] = []): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKeyPem);
  // A positive, minimal DER integer (see functions/server/tls.ts).
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x3f) | 0x40;
  cert.serialNumber = serial.toString('hex');
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 60 * 60 * 1000);
  // Kubernetes reads an x509 user's groups from the subject's organizations.
  cert.setSubject([{ name: 'commonName', value: subject }, ...organizations.map((value) => ({ name: 'organizationName', value }))]);
  cert.setIssuer(issuer ? issuer.subject.attributes : [{ name: 'commonName', value: subject }]);
  cert.setExtensions(extensions);
  cert.sign(forge.pki.privateKeyFromPem(signerKeyPem), forge.md.sha256.create());
  return cert;
}

/** A CA that signs client and server certificates. */
export interface TestCa extends Pems {
  /** A client certificate for `user` (its common name) in `groups` (its organizations), as Kubernetes reads x509 users. */
  client(user: string, groups?: readonly string[]): Pems;
  /** A server certificate for 127.0.0.1 and the given DNS names. */
  server(dnsNames: string[]): Pems;
}

export function testCa(name = 'test CA'): TestCa {
  const caKeys = keys();
  const ca = sign(name, caKeys.publicKeyPem, caKeys.privateKeyPem, undefined, [
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
  ]);
  const leaf = (subject: string, extensions: object[], organizations: readonly string[] = []): Pems => {
    const leafKeys = keys();
    const cert = sign(subject, leafKeys.publicKeyPem, caKeys.privateKeyPem, ca, [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      ...extensions,
    ], organizations);
    return { certPem: forge.pki.certificateToPem(cert), keyPem: leafKeys.privateKeyPem };
  };
  return {
    certPem: forge.pki.certificateToPem(ca),
    keyPem: caKeys.privateKeyPem,
    client: (user, groups = []) => leaf(user, [{ name: 'extKeyUsage', clientAuth: true }], groups),
    server: (dnsNames) =>
      leaf(dnsNames[0] ?? '127.0.0.1', [
        { name: 'extKeyUsage', serverAuth: true },
        { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }, ...dnsNames.map((value) => ({ type: 2, value }))] },
      ]),
  };
}
