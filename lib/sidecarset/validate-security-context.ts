/**
 * A container's `securityContext`, as Kubernetes 1.30's
 * ValidateSecurityContext checks it for Kruise 1.8, with Kubernetes' paths
 * and messages. The pod Kruise validates in sets no securityContext, so the
 * pod's user namespace is the host's (hostUsers true).
 */
import type { FieldError, FieldPath } from '../kube/field-errors.ts';
import { dns1123SubdomainErrors } from '../kube/names.ts';
import type { JsonObject } from '../kube/types.ts';
import { validateLocalDescendingPath } from './validate-paths.ts';
import { integerAt, isUnset, listAt, objectAt, stringAt } from './validate-shape.ts';

const MAX_ID = 2147483647;
const PROC_MOUNT_TYPES = ['Default', 'Unmasked'] as const;
const PROFILE_TYPES = ['Localhost', 'RuntimeDefault', 'Unconfined'] as const;
const MAX_APPARMOR_PROFILE_LENGTH = 4095;
const MAX_GMSA_SPEC_KIB = 64;
const MAX_USER_DOMAIN_LENGTH = 256;
const MAX_USER_LENGTH = 104;

// eslint-disable-next-line no-control-regex -- control characters are what Kubernetes refuses here
const CONTROL = /[\u0000-\u001f\u007f]/;
const NETBIOS_DOMAIN = /^[^\\/:*?"<>|.][^\\/:*?"<>|]{0,14}$/;
const DNS_DOMAIN = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
const USER_BAD_CHARS = /["/\\:;|=,+*?<>@[\]]/;
const USER_DOTS_SPACES = /^[. ]+$/;

/** Go's len(): strings are measured in UTF-8 bytes there. */
function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

function validateId(value: unknown, path: FieldPath, errs: FieldError[]): void {
  const id = integerAt(value, path, errs);
  if (id !== undefined && (id < 0 || id > MAX_ID)) errs.push(path.invalid(id, `must be between 0 and ${MAX_ID}, inclusive`));
}

/** validateSeccompProfileField. */
function validateSeccompProfile(profile: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const type = stringAt(profile.type, path.child('type'), errs) ?? '';
  if (type === '') errs.push(path.child('type').required('type is required when seccompProfile is set'));
  else if (!(PROFILE_TYPES as readonly string[]).includes(type)) errs.push(path.child('type').unsupported(type, PROFILE_TYPES));
  const localhost = stringAt(profile.localhostProfile, path.child('localhostProfile'), errs);
  if (type === 'Localhost') {
    if (localhost === undefined) errs.push(path.child('localhostProfile').required('must be set when seccomp type is Localhost'));
    else validateLocalDescendingPath(localhost, path.child('localhostProfile'), errs);
  } else if (localhost !== undefined) {
    errs.push(path.child('localhostProfile').invalid(profile, 'can only be set when seccomp type is Localhost'));
  }
}

/** ValidateAppArmorProfileField. */
function validateAppArmorProfile(profile: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const type = stringAt(profile.type, path.child('type'), errs) ?? '';
  const lp = path.child('localhostProfile');
  const localhost = stringAt(profile.localhostProfile, lp, errs);
  if (type === 'Localhost') {
    if (localhost === undefined) {
      errs.push(lp.required('must be set when AppArmor type is Localhost'));
      return;
    }
    if (localhost.trim() !== localhost) errs.push(lp.invalid(localhost, 'must not be padded with whitespace'));
    else if (localhost === '') errs.push(lp.required('must be set when AppArmor type is Localhost'));
    if (byteLength(localhost) > MAX_APPARMOR_PROFILE_LENGTH) {
      // Kubernetes 1.32 says it with field.TooLong (1.30's TooLongMaxLength said "may not be longer than N").
      errs.push(lp.tooLong('', MAX_APPARMOR_PROFILE_LENGTH));
    }
  } else if (type === 'RuntimeDefault' || type === 'Unconfined') {
    if (localhost !== undefined) errs.push(lp.invalid(localhost, 'can only be set when AppArmor type is Localhost'));
  } else if (type === '') {
    errs.push(path.child('type').required('type is required when appArmorProfile is set'));
  } else {
    errs.push(path.child('type').unsupported(type, PROFILE_TYPES));
  }
}

/** The problems with a Windows user name, `DOMAIN\USER` or `USER` (validateWindowsSecurityContextOptions). */
function runAsUserNameErrors(name: string): string[] {
  if (name === '') return ['runAsUserName cannot be an empty string'];
  if (CONTROL.test(name)) return ['runAsUserName cannot contain control characters'];
  const parts = name.split('\\');
  if (parts.length > 2) return ['runAsUserName cannot contain more than one backslash'];
  const [domain, user] = parts.length === 1 ? ['', parts[0] ?? ''] : [parts[0] ?? '', parts[1] ?? ''];
  const msgs: string[] = [];
  if (byteLength(domain) >= MAX_USER_DOMAIN_LENGTH) {
    msgs.push(`runAsUserName's Domain length must be under ${MAX_USER_DOMAIN_LENGTH} characters`);
  }
  if (parts.length === 2 && !NETBIOS_DOMAIN.test(domain) && !DNS_DOMAIN.test(domain)) {
    msgs.push("runAsUserName's Domain doesn't match the NetBios nor the DNS format");
  }
  if (user === '') msgs.push("runAsUserName's User cannot be empty");
  else if (byteLength(user) > MAX_USER_LENGTH) msgs.push(`runAsUserName's User length must not be longer than ${MAX_USER_LENGTH} characters`);
  if (USER_DOTS_SPACES.test(user)) msgs.push("runAsUserName's User cannot contain only periods or spaces");
  if (USER_BAD_CHARS.test(user)) msgs.push('runAsUserName\'s User cannot contain the following characters: "/\\:;|=,+*?<>@[]');
  return msgs;
}

function validateWindowsOptions(options: JsonObject, path: FieldPath, errs: FieldError[]): void {
  const specName = stringAt(options.gmsaCredentialSpecName, path.child('gmsaCredentialSpecName'), errs);
  if (specName !== undefined) {
    for (const msg of dns1123SubdomainErrors(specName)) errs.push(path.child('gmsaCredentialSpecName').invalid(specName, msg));
  }
  const spec = stringAt(options.gmsaCredentialSpec, path.child('gmsaCredentialSpec'), errs);
  if (spec === '') errs.push(path.child('gmsaCredentialSpec').invalid(spec, 'gmsaCredentialSpec cannot be an empty string'));
  else if (spec !== undefined && byteLength(spec) > MAX_GMSA_SPEC_KIB * 1024) {
    errs.push(path.child('gmsaCredentialSpec').invalid(spec, `gmsaCredentialSpec size must be under ${MAX_GMSA_SPEC_KIB} KiB`));
  }
  const userName = stringAt(options.runAsUserName, path.child('runAsUserName'), errs);
  if (userName !== undefined) {
    for (const msg of runAsUserNameErrors(userName)) errs.push(path.child('runAsUserName').invalid(userName, msg));
  }
}

/** `securityContext` of one container at `path`. */
export function validateSecurityContext(sc: JsonObject, path: FieldPath, errs: FieldError[]): void {
  // Kruise's manager runs with --allow-privileged=true by default, so privileged is not refused.
  validateId(sc.runAsUser, path.child('runAsUser'), errs);
  validateId(sc.runAsGroup, path.child('runAsGroup'), errs);
  const procMount = stringAt(sc.procMount, path.child('procMount'), errs);
  if (procMount !== undefined) {
    if (!(PROC_MOUNT_TYPES as readonly string[]).includes(procMount)) {
      errs.push(path.child('procMount').unsupported(procMount, PROC_MOUNT_TYPES));
    }
    if (procMount === 'Unmasked') errs.push(path.child('procMount').invalid(procMount, '`hostUsers` must be false to use `Unmasked`'));
  }
  const seccomp = objectAt(sc.seccompProfile, path.child('seccompProfile'), errs);
  if (seccomp) validateSeccompProfile(seccomp, path.child('seccompProfile'), errs);
  if (sc.allowPrivilegeEscalation === false) {
    if (sc.privileged === true) {
      errs.push(path.invalid(sc, 'cannot set `allowPrivilegeEscalation` to false and `privileged` to true'));
    }
    const capabilities = objectAt(sc.capabilities, path.child('capabilities'), []);
    for (const cap of listAt(capabilities?.add, path.child('capabilities').child('add'), [])) {
      if (cap === 'CAP_SYS_ADMIN') {
        errs.push(path.invalid(sc, 'cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN'));
      }
    }
  }
  const windows = objectAt(sc.windowsOptions, path.child('windowsOptions'), errs);
  if (windows) validateWindowsOptions(windows, path.child('windowsOptions'), errs);
  const appArmor = objectAt(sc.appArmorProfile, path.child('appArmorProfile'), errs);
  if (appArmor) validateAppArmorProfile(appArmor, path.child('appArmorProfile'), errs);
  if (!isUnset(sc.privileged) && typeof sc.privileged !== 'boolean') errs.push(path.child('privileged').invalid(sc.privileged, 'must be a boolean'));
}
