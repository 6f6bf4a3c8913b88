/**
 * How the answer to a guarded write (one that tests the object's
 * resourceVersion, or a create) is read: conflicts in the API server's
 * several spellings, and the object's version read back when the answer
 * alone cannot tell. Pods and ControllerRevisions are written this way.
 */
import { objectOf, stringOf } from '../kube/json.ts';
import type { KubeAnswer, KubeClient } from './kube-request.ts';

/** A precondition answers 409; some API servers answer a failed `test` operation 422 with the patch library's words. */
export function isConflict(answer: KubeAnswer): boolean {
  if (answer.status === 409) return true;
  if (answer.status !== 422) return false;
  const message = stringOf(objectOf(answer.body)?.message) ?? (typeof answer.body === 'string' ? answer.body : '');
  return /test(ing value)? .*failed|test operation/i.test(message);
}

/**
 * kube-apiserver 1.36 answers a JSON Patch it cannot apply, a failed `test`
 * included, with a bare 422 (reason Invalid, no causes), the same for any op.
 * Whether the tested version moved on is then read from the object itself.
 */
export function isBareInvalid(answer: KubeAnswer): boolean {
  const body = objectOf(answer.body);
  return answer.status === 422 && stringOf(body?.reason) === 'Invalid' && !Array.isArray(objectOf(body?.details)?.causes);
}

/** The object's resourceVersion; '' when it has none. */
export function resourceVersionOf(body: unknown): string {
  return stringOf(objectOf(objectOf(body)?.metadata)?.resourceVersion) ?? '';
}

/** Whether the object at `path` is gone or stored at another version than `tested`: the patch's test failed. */
export async function movedOn(client: KubeClient, path: string, tested: string, operation: string, signal: AbortSignal | undefined): Promise<boolean> {
  const answer = await client.request({ method: 'GET', path, operation: `${operation} (reading it after a refused patch)`, ...(signal === undefined ? {} : { signal }) });
  if (answer.status === 404) return true;
  return answer.status === 200 && resourceVersionOf(answer.body) !== tested;
}
