/**
 * The two SidecarSet hashes (spec section 5), byte for byte as OpenKruise
 * v1.8 computes them in pkg/control/sidecarcontrol/hash.go, so pods that
 * Kruise injected keep matching.
 */
import { createHash } from 'node:crypto';
import { decodeGo, encodeGo, goJsonString, SIDECAR_CONTAINER, SIDECAR_CONTAINER_LIST } from './go-json.ts';
import type { GoValue } from './go-json.ts';
import type { SidecarSet } from './types.ts';

/** k8s.io/apimachinery rand.SafeEncodeString's alphabet: no vowels, no look-alikes. */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

function safeEncode(hex: string): string {
  let out = '';
  for (let i = 0; i < hex.length; i++) out += ALPHANUMS.charAt(hex.charCodeAt(i) % ALPHANUMS.length);
  return out;
}

function decodedContainers(list: GoValue): Map<string, GoValue>[] {
  return Array.isArray(list) ? list.filter((item) => item instanceof Map) : [];
}

/**
 * Whether a SidecarContainer prints as `{"name":...,"image":...,...}`: name
 * first and always written, image right after it. The without-image
 * document is then the same text with each `,"image":...` cut out, since
 * Kruise's "" image is omitted (omitempty); checked once rather than assumed.
 */
const IMAGE_FOLLOWS_NAME = (() => {
  if (SIDECAR_CONTAINER.kind !== 'struct') return false;
  const [name, image] = SIDECAR_CONTAINER.fields;
  return name?.name === 'name' && !name.omitempty && name.type.kind === 'string' && image?.name === 'image' && image.type.kind === 'string';
})();

/** One container list printed with images, and without (Kruise's copy with Image set to ""). */
function encodeContainers(list: GoValue): { withImage: string; withoutImage: string } {
  if (!Array.isArray(list)) return { withImage: 'null', withoutImage: 'null' };
  let withImage = '[';
  let withoutImage = '[';
  list.forEach((item, i) => {
    const sep = i === 0 ? '' : ',';
    const printed = encodeGo(SIDECAR_CONTAINER, item);
    withImage += sep + printed;
    if (!(item instanceof Map)) {
      withoutImage += sep + printed;
      return;
    }
    const image = item.get('image');
    if (typeof image !== 'string' || image === '') {
      withoutImage += sep + printed;
    } else if (IMAGE_FOLLOWS_NAME) {
      const name = item.get('name');
      const head = `{"name":${goJsonString(typeof name === 'string' ? name : '')}`;
      withoutImage += sep + head + printed.slice(head.length + `,"image":${goJsonString(image)}`.length);
    } else {
      const copy = new Map(item);
      copy.delete('image');
      withoutImage += sep + encodeGo(SIDECAR_CONTAINER, copy);
    }
  });
  return { withImage: `${withImage}]`, withoutImage: `${withoutImage}]` };
}

/**
 * The JSON documents Kruise hashes, with and without images, from one
 * decoding and one encoding: Go's json.Marshal of
 * `map[string]interface{}{"containers": ..., "initContainers": ...}`, whose
 * keys Go sorts. Init containers are included, all of them, only when one
 * is a native sidecar (restartPolicy Always). The containers are read as
 * Kruise's Go types read them, so unknown fields do not count.
 */
function hashDocuments(set: SidecarSet): { withImage: string; withoutImage: string } {
  const containers = decodeGo(SIDECAR_CONTAINER_LIST, set.spec?.containers);
  const initContainers = decodeGo(SIDECAR_CONTAINER_LIST, set.spec?.initContainers);
  const nativeSidecar = decodedContainers(initContainers).some((c) => c.get('restartPolicy') === 'Always');
  const main = encodeContainers(containers);
  const init = nativeSidecar ? encodeContainers(initContainers) : undefined;
  const document = (part: 'withImage' | 'withoutImage'): string =>
    `{"containers":${main[part]}${init ? `,"initContainers":${init[part]}` : ''}}`;
  return { withImage: document('withImage'), withoutImage: document('withoutImage') };
}

/** The document of {@link sidecarSetHash}, or with `withoutImage` of {@link sidecarSetHashWithoutImage}. */
export function sidecarSetHashDocument(set: SidecarSet, options: { withoutImage?: boolean } = {}): string {
  const documents = hashDocuments(set);
  return options.withoutImage ? documents.withoutImage : documents.withImage;
}

function hashOf(document: string): string {
  return safeEncode(createHash('sha256').update(document, 'utf8').digest('hex'));
}

/** Both hash annotation values at once, sharing the encoding (defaulting writes both). */
export function sidecarSetHashes(set: SidecarSet): { hash: string; withoutImage: string } {
  const documents = hashDocuments(set);
  return { hash: hashOf(documents.withImage), withoutImage: hashOf(documents.withoutImage) };
}

/** The `kruise.io/sidecarset-hash` annotation value: 64 characters. */
export function sidecarSetHash(set: SidecarSet): string {
  return hashOf(hashDocuments(set).withImage);
}

/** The `kruise.io/sidecarset-hash-without-image` annotation value: the hash with every image removed. */
export function sidecarSetHashWithoutImage(set: SidecarSet): string {
  return hashOf(hashDocuments(set).withoutImage);
}
