/**
 * ControllerRevision names (rollout.md §2.1): Kubernetes'
 * pkg/controller/history HashControllerRevision and ControllerRevisionName.
 */

/** k8s.io/apimachinery rand.SafeEncodeString's alphabet (the SidecarSet hash uses it too). */
const ALPHANUMS = 'bcdfghjklmnpqrstvwxz2456789';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** Go's hash/fnv New32 (FNV-1, multiply then xor) over bytes, continuing from `hash`. */
function fnv1(hash: number, bytes: Uint8Array): number {
  let h = hash;
  for (const b of bytes) h = (Math.imul(h, FNV_PRIME) ^ b) >>> 0;
  return h;
}

/**
 * HashControllerRevision: FNV-1 32-bit over the revision's data bytes, then
 * over the decimal collision count (when there is one), printed in decimal
 * and mapped character by character through SafeEncodeString's alphabet.
 */
export function revisionHash(data: string, collisionCount?: number): string {
  let h = fnv1(FNV_OFFSET, Buffer.from(data, 'utf8'));
  if (collisionCount !== undefined) h = fnv1(h, Buffer.from(String(collisionCount), 'utf8'));
  const decimal = String(h);
  let out = '';
  for (let i = 0; i < decimal.length; i++) out += ALPHANUMS.charAt(decimal.charCodeAt(i) % ALPHANUMS.length);
  return out;
}

/** ControllerRevisionName: the prefix cut to 223 characters, a dash, the hash. */
export function revisionName(prefix: string, hash: string): string {
  return `${prefix.length > 223 ? prefix.slice(0, 223) : prefix}-${hash}`;
}
