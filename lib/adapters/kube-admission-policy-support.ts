/**
 * Whether a cluster serves MutatingAdmissionPolicy in
 * admissionregistration.k8s.io/v1 (Kubernetes 1.36 or later, on by
 * default): the injection policy's API. Read from discovery, which every
 * authenticated identity may read.
 */
import { arrayOf, isObject, objectOf, stringOf } from '../kube/json.ts';
import { apiServerAnswered } from './kube-api-error.ts';
import type { KubeClient } from './kube-request.ts';

const GROUP_VERSION_PATH = '/apis/admissionregistration.k8s.io/v1';
const RESOURCE = 'mutatingadmissionpolicies';
const TIMEOUT_MS = 10_000;
const OPERATION = 'read the admissionregistration.k8s.io/v1 API resources';

/** @throws KubeApiError when discovery cannot be read (refused, unreachable, or an answer other than 200 or 404). */
export async function servesMutatingAdmissionPolicy(client: KubeClient): Promise<boolean> {
  const answer = await client.request({ method: 'GET', path: GROUP_VERSION_PATH, operation: OPERATION, signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (answer.status === 404) return false;
  if (answer.status !== 200 || !isObject(answer.body)) throw apiServerAnswered(OPERATION, answer.status, answer.body);
  return arrayOf(answer.body.resources).some((resource) => stringOf(objectOf(resource)?.name) === RESOURCE);
}

/** Whether the MutatingAdmissionPolicy `name` is installed (false, too, where the cluster does not serve the kind); undefined when that cannot be read (forbidden). */
export async function mutatingAdmissionPolicyInstalled(client: KubeClient, name: string, signal?: AbortSignal): Promise<boolean | undefined> {
  const answer = await client.request({ method: 'GET', path: `${GROUP_VERSION_PATH}/${RESOURCE}/${encodeURIComponent(name)}`, operation: `get MutatingAdmissionPolicy ${name}`, ...(signal !== undefined ? { signal } : {}) });
  if (answer.status === 200) return true;
  if (answer.status === 404) return false;
  return undefined;
}
