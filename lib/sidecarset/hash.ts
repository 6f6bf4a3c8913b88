/**
 * The two SidecarSet hashes (spec section 5), byte for byte as OpenKruise
 * v1.8 computes them in pkg/control/sidecarcontrol/hash.go, so pods that
 * Kruise injected keep matching.
 */
import { createHash } from 'node:crypto';
import { decodeGo, encodeGo, SIDECAR_CONTAINER_LIST } from './go-json.ts';
import type { GoValue } from './go-json.ts';
import type { SidecarSet } from './types.ts';

/** k8s.io/apimachinery rand.SafeEncodeString's alphabet: no vowels, no look-alikes. */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

function safeEncode(hex: string): string {
  return Array.from(hex, (c) => ALPHANUMS.charAt(c.charCodeAt(0) % ALPHANUMS.length)).join('');
}

function decodedContainers(list: GoValue): Map<string, GoValue>[] {
  return Array.isArray(list) ? list.filter((item) => item instanceof Map) : [];
}

/**
 * The JSON document Kruise hashes: Go's json.Marshal of
 * `map[string]interface{}{"containers": ..., "initContainers": ...}`, whose
 * keys Go sorts. Init containers are included, all of them, only when one
 * is a native sidecar (restartPolicy Always). The containers are read as
 * Kruise's Go types read them, so unknown fields do not count.
 */
export function sidecarSetHashDocument(set: SidecarSet, options: { withoutImage?: boolean } = {}): string {
  const containers = decodeGo(SIDECAR_CONTAINER_LIST, set.spec?.containers);
  const initContainers = decodeGo(SIDECAR_CONTAINER_LIST, set.spec?.initContainers);
  if (options.withoutImage) {
    // Kruise sets Image to "" on a copy; omitempty then leaves it out.
    for (const c of [...decodedContainers(containers), ...decodedContainers(initContainers)]) c.delete('image');
  }
  const nativeSidecar = decodedContainers(initContainers).some((c) => c.get('restartPolicy') === 'Always');
  const init = nativeSidecar ? `,"initContainers":${encodeGo(SIDECAR_CONTAINER_LIST, initContainers)}` : '';
  return `{"containers":${encodeGo(SIDECAR_CONTAINER_LIST, containers)}${init}}`;
}

function hashOf(document: string): string {
  return safeEncode(createHash('sha256').update(document, 'utf8').digest('hex'));
}

/** The `kruise.io/sidecarset-hash` annotation value: 64 characters. */
export function sidecarSetHash(set: SidecarSet): string {
  return hashOf(sidecarSetHashDocument(set));
}

/** The `kruise.io/sidecarset-hash-without-image` annotation value: the hash with every image removed. */
export function sidecarSetHashWithoutImage(set: SidecarSet): string {
  return hashOf(sidecarSetHashDocument(set, { withoutImage: true }));
}
