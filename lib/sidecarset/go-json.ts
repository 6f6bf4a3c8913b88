/**
 * Go's encoding/json round trip of a Kruise SidecarContainer: decode JSON the
 * way Kruise's Go types do (dropping unknown keys), then print the bytes
 * json.Marshal writes. The SidecarSet hash is a digest of those bytes, so key
 * order, omitempty, number and string formatting must all match Go's.
 *
 * The tables below follow the Go structs of k8s.io/api core/v1 and
 * OpenKruise apps/v1alpha1: keys in struct field order, embedded structs
 * (LocalObjectReference, ProbeHandler, Container) inlined where they sit.
 * Fields newer than the k8s.io/api a program was built with are unknown to
 * it; `since` records the Kubernetes minor that added each such field.
 *
 * Kruise decodes with sigs.k8s.io/json: keys match case-sensitively. Input is
 * untrusted. Where Go's decoder meets a value of the wrong type it reports an
 * error (Kruise then rejects the object) after keeping the zero value; we
 * keep the zero value the same way and carry on, so this never throws:
 * - a mistyped scalar, slice, map or struct is its zero value (a mistyped
 *   slice element is a zero element);
 * - a pointer is allocated for any non-null value, even a mistyped one, so
 *   `runAsUser: "x"` prints `"runAsUser":0`, as Go leaves it;
 * - an invalid quantity is dropped from its map, or is zero as a field;
 * - an IntOrString that is not a string is an integer, 0 unless it is a
 *   valid int32.
 * JSON numbers arrive as JavaScript doubles, so an int64 beyond 2^53 has
 * already lost precision; no Kubernetes container field needs such values.
 */
import { canonicalQuantity, quantityFromJson } from '../kube/quantity.ts';
import type { Quantity } from '../kube/quantity.ts';

/** A Go type as encoding/json sees it. */
export type GoType =
  | { readonly kind: 'string' | 'bool' | 'int32' | 'int64' | 'quantity' | 'intOrString' }
  | { readonly kind: 'slice' | 'map' | 'ptr'; readonly elem: GoType }
  | { readonly kind: 'struct'; readonly fields: readonly GoField[] };

/** One struct field: its JSON key, type, `omitempty` tag and the Kubernetes minor that added it. */
export interface GoField {
  readonly name: string;
  readonly type: GoType;
  readonly omitempty: boolean;
  readonly since?: number;
}

/**
 * A value as Go holds it after decoding. `undefined` is the zero value (nil
 * for pointers, slices and maps); a set pointer holds its target; integers
 * are bigint; an IntOrString is a bigint or a string; structs and maps are
 * `Map`s keyed by JSON name.
 */
export type GoValue = string | boolean | bigint | Quantity | GoValue[] | GoStruct | undefined;
/** A decoded struct or map. */
export type GoStruct = Map<string, GoValue>;

export interface GoJsonOptions {
  /** Minor version of the k8s.io/api the Go program was built with (default: Kruise v1.8's). */
  readonly kubernetesMinor?: number;
}

/** OpenKruise v1.8.x is built with k8s.io/api v0.30.10. */
export const KRUISE_V1_8_KUBERNETES_MINOR = 30;

const STRING: GoType = { kind: 'string' };
const BOOL: GoType = { kind: 'bool' };
const INT32: GoType = { kind: 'int32' };
const INT64: GoType = { kind: 'int64' };
const QUANTITY: GoType = { kind: 'quantity' };
const INT_OR_STRING: GoType = { kind: 'intOrString' };
const ptr = (elem: GoType): GoType => ({ kind: 'ptr', elem });
const slice = (elem: GoType): GoType => ({ kind: 'slice', elem });
const map = (elem: GoType): GoType => ({ kind: 'map', elem });
const struct = (...fields: GoField[]): GoType => ({ kind: 'struct', fields });
/** A field without omitempty: always written, nil as null. */
const req = (name: string, type: GoType, since?: number): GoField => ({ name, type, omitempty: false, since });
/** A field tagged omitempty. Go never treats a struct as empty, so struct fields are still written. */
const opt = (name: string, type: GoType, since?: number): GoField => ({ name, type, omitempty: true, since });

const localObjectReference = [opt('name', STRING)];
const objectFieldSelector = struct(opt('apiVersion', STRING), req('fieldPath', STRING));
const keySelector = struct(...localObjectReference, req('key', STRING), opt('optional', ptr(BOOL)));
const execAction = struct(opt('command', slice(STRING)));
const httpGetAction = struct(
  opt('path', STRING),
  req('port', INT_OR_STRING),
  opt('host', STRING),
  opt('scheme', STRING),
  opt('httpHeaders', slice(struct(req('name', STRING), req('value', STRING)))),
  opt('protocol', ptr(STRING), 37),
);
const tcpSocketAction = struct(req('port', INT_OR_STRING), opt('host', STRING));
const probe = struct(
  // ProbeHandler is embedded: its fields come first.
  opt('exec', ptr(execAction)),
  opt('httpGet', ptr(httpGetAction)),
  opt('tcpSocket', ptr(tcpSocketAction)),
  opt('grpc', ptr(struct(req('port', INT32), req('service', ptr(STRING)), opt('mode', ptr(STRING), 37)))),
  opt('initialDelaySeconds', INT32),
  opt('timeoutSeconds', INT32),
  opt('periodSeconds', INT32),
  opt('successThreshold', INT32),
  opt('failureThreshold', INT32),
  opt('terminationGracePeriodSeconds', ptr(INT64)),
);
const lifecycleHandler = struct(
  opt('exec', ptr(execAction)),
  opt('httpGet', ptr(httpGetAction)),
  opt('tcpSocket', ptr(tcpSocketAction)),
  opt('sleep', ptr(struct(req('seconds', INT64)))),
);
const profile = struct(req('type', STRING), opt('localhostProfile', ptr(STRING)));
const securityContext = struct(
  opt('capabilities', ptr(struct(opt('add', slice(STRING)), opt('drop', slice(STRING))))),
  opt('privileged', ptr(BOOL)),
  opt('seLinuxOptions', ptr(struct(opt('user', STRING), opt('role', STRING), opt('type', STRING), opt('level', STRING)))),
  opt(
    'windowsOptions',
    ptr(
      struct(
        opt('gmsaCredentialSpecName', ptr(STRING)),
        opt('gmsaCredentialSpec', ptr(STRING)),
        opt('runAsUserName', ptr(STRING)),
        opt('hostProcess', ptr(BOOL)),
      ),
    ),
  ),
  opt('runAsUser', ptr(INT64)),
  opt('runAsGroup', ptr(INT64)),
  opt('runAsNonRoot', ptr(BOOL)),
  opt('readOnlyRootFilesystem', ptr(BOOL)),
  opt('allowPrivilegeEscalation', ptr(BOOL)),
  opt('procMount', ptr(STRING)),
  opt('seccompProfile', ptr(profile)),
  opt('appArmorProfile', ptr(profile)),
);

/** core/v1 Container fields, in Go order. */
const containerFields: GoField[] = [
  req('name', STRING),
  opt('image', STRING),
  opt('command', slice(STRING)),
  opt('args', slice(STRING)),
  opt('workingDir', STRING),
  opt(
    'ports',
    slice(
      struct(
        opt('name', STRING),
        opt('hostPort', INT32),
        req('containerPort', INT32),
        opt('protocol', STRING),
        opt('hostIP', STRING),
      ),
    ),
  ),
  opt(
    'envFrom',
    slice(
      struct(
        opt('prefix', STRING),
        opt('configMapRef', ptr(struct(...localObjectReference, opt('optional', ptr(BOOL))))),
        opt('secretRef', ptr(struct(...localObjectReference, opt('optional', ptr(BOOL))))),
      ),
    ),
  ),
  opt(
    'env',
    slice(
      struct(
        req('name', STRING),
        opt('value', STRING),
        opt(
          'valueFrom',
          ptr(
            struct(
              opt('fieldRef', ptr(objectFieldSelector)),
              opt(
                'resourceFieldRef',
                ptr(struct(opt('containerName', STRING), req('resource', STRING), opt('divisor', QUANTITY))),
              ),
              opt('configMapKeyRef', ptr(keySelector)),
              opt('secretKeyRef', ptr(keySelector)),
              opt(
                'fileKeyRef',
                ptr(struct(req('volumeName', STRING), req('path', STRING), req('key', STRING), opt('optional', ptr(BOOL)))),
                34,
              ),
            ),
          ),
        ),
      ),
    ),
  ),
  opt(
    'resources',
    struct(
      opt('limits', map(QUANTITY)),
      opt('requests', map(QUANTITY)),
      opt('claims', slice(struct(req('name', STRING), opt('request', STRING, 31)))),
    ),
  ),
  opt('resizePolicy', slice(struct(req('resourceName', STRING), req('restartPolicy', STRING)))),
  opt('restartPolicy', ptr(STRING)),
  opt(
    'restartPolicyRules',
    slice(
      struct(
        opt('action', STRING),
        opt('exitCodes', ptr(struct(opt('operator', STRING), opt('values', slice(INT32))))),
      ),
    ),
    34,
  ),
  opt(
    'volumeMounts',
    slice(
      struct(
        req('name', STRING),
        opt('readOnly', BOOL),
        opt('recursiveReadOnly', ptr(STRING)),
        req('mountPath', STRING),
        opt('subPath', STRING),
        opt('mountPropagation', ptr(STRING)),
        opt('subPathExpr', STRING),
        opt('bindMountOptions', slice(STRING), 37),
      ),
    ),
  ),
  opt('volumeDevices', slice(struct(req('name', STRING), req('devicePath', STRING)))),
  opt('livenessProbe', ptr(probe)),
  opt('readinessProbe', ptr(probe)),
  opt('startupProbe', ptr(probe)),
  opt(
    'lifecycle',
    ptr(struct(opt('postStart', ptr(lifecycleHandler)), opt('preStop', ptr(lifecycleHandler)), opt('stopSignal', ptr(STRING), 33))),
  ),
  opt('terminationMessagePath', STRING),
  opt('terminationMessagePolicy', STRING),
  opt('imagePullPolicy', STRING),
  opt('securityContext', ptr(securityContext)),
  opt('stdin', BOOL),
  opt('stdinOnce', BOOL),
  opt('tty', BOOL),
];

const resourceExprs = ptr(struct(opt('cpu', STRING), opt('memory', STRING)));
/** OpenKruise 1.9 ResourcesPolicy. */
const resourcesPolicy = struct(
  req('targetContainersMode', STRING),
  opt('targetContainersNameRegex', STRING),
  req('resourcesExpr', struct(opt('limits', resourceExprs), opt('requests', resourceExprs))),
);

/** OpenKruise apps/v1alpha1 (and 1.9's v1beta1) SidecarContainer: an embedded core/v1 Container, then Kruise's fields. */
export const SIDECAR_CONTAINER: GoType = struct(
  ...containerFields,
  opt('podInjectPolicy', STRING),
  opt('upgradeStrategy', struct(opt('upgradeType', STRING), opt('hotUpgradeEmptyImage', STRING))),
  opt('shareVolumePolicy', struct(opt('type', STRING))),
  // OpenKruise 1.9: a pointer, so a set without it hashes as under 1.8.
  opt('shareVolumeDevicePolicy', ptr(struct(opt('type', STRING)))),
  opt(
    'transferEnv',
    slice(
      struct(
        opt('sourceContainerName', STRING),
        opt('sourceContainerNameFrom', ptr(struct(opt('fieldRef', ptr(objectFieldSelector))))),
        opt('envName', STRING),
        opt('envNames', slice(STRING)),
      ),
    ),
  ),
  // OpenKruise 1.9: a pointer too; its mode and expressions are written even when empty.
  opt('resourcesPolicy', ptr(resourcesPolicy)),
);

/** []SidecarContainer, the type of SidecarSet spec.containers and spec.initContainers. */
export const SIDECAR_CONTAINER_LIST: GoType = slice(SIDECAR_CONTAINER);

const INT32_MIN = -(2n ** 31n);
const INT32_MAX = 2n ** 31n - 1n;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Any surrogate: only a string holding one can be ill-formed. */
const SURROGATE = /[\uD800-\uDFFF]/;

/** Go decodes a lone UTF-16 surrogate escape to U+FFFD. */
function wellFormed(s: string): string {
  // Every decoded string passes here; nearly none holds a surrogate at all.
  if (!SURROGATE.test(s)) return s;
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

function integer(value: unknown, min: bigint, max: bigint): bigint | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value)) return undefined;
  const n = BigInt(value);
  return n >= min && n <= max ? n : undefined;
}

/** The zero value a set pointer starts from before Go decodes into its target. */
function allocated(type: GoType): GoValue {
  switch (type.kind) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'int32':
    case 'int64':
    case 'intOrString':
      return 0n;
    case 'quantity':
      return { unscaled: 0n, exponent: 0, format: 'DecimalSI' };
    case 'struct':
    case 'map':
      return new Map();
    case 'slice':
    case 'ptr':
      return undefined;
  }
}

/**
 * Decode a JSON value into `type` as Kruise's Go decoder would (see the file
 * comment for values of the wrong type). Absent and null are both zero.
 */
export function decodeGo(type: GoType, json: unknown, options: GoJsonOptions = {}): GoValue {
  const minor = options.kubernetesMinor ?? KRUISE_V1_8_KUBERNETES_MINOR;
  const decode = (t: GoType, value: unknown): GoValue => {
    switch (t.kind) {
      case 'string':
        return typeof value === 'string' ? wellFormed(value) : undefined;
      case 'bool':
        return typeof value === 'boolean' ? value : undefined;
      case 'int32':
        return integer(value, INT32_MIN, INT32_MAX);
      case 'int64':
        return integer(value, INT64_MIN, INT64_MAX);
      case 'quantity':
        return value === undefined ? undefined : quantityFromJson(value);
      case 'intOrString':
        return typeof value === 'string' ? wellFormed(value) : integer(value, INT32_MIN, INT32_MAX);
      case 'ptr':
        return value === null || value === undefined ? undefined : (decode(t.elem, value) ?? allocated(t.elem));
      case 'slice':
        return Array.isArray(value) ? value.map((item) => decode(t.elem, item) ?? allocated(t.elem)) : undefined;
      case 'map': {
        if (!isJsonObject(value)) return undefined;
        const out: GoStruct = new Map();
        for (const [key, item] of Object.entries(value)) {
          const decoded = decode(t.elem, item);
          // Go stops at an invalid quantity without storing it; other values keep their zero.
          if (decoded === undefined && t.elem.kind === 'quantity') continue;
          out.set(wellFormed(key), decoded ?? allocated(t.elem));
        }
        return out;
      }
      case 'struct': {
        const out: GoStruct = new Map();
        if (!isJsonObject(value)) return out;
        for (const field of t.fields) {
          if ((field.since ?? 0) > minor || !Object.hasOwn(value, field.name)) continue;
          const decoded = decode(field.type, value[field.name]);
          if (decoded !== undefined) out.set(field.name, decoded);
        }
        return out;
      }
    }
  };
  return decode(type, json);
}

/**
 * A JSON string as Go's json.Marshal writes it: HTML-safe (`<`, `>`, `&`
 * escaped), U+2028 and U+2029 escaped for JavaScript, other control
 * characters as \u00XX in lower-case hex; \b and \f short since Go 1.22,
 * which Kruise v1.8 is built with.
 */
export function goJsonString(s: string): string {
  // One test per string: most need no escape at all (names, images, paths).
  if (!NEEDS_ESCAPE.test(s)) return `"${s}"`;
  // JSON.stringify escapes exactly what Go does below U+0080 except the HTML
  // characters (quote, backslash, \b \f \n \r \t short, other controls as
  // lower-case \u00xx), natively; the five it leaves are then replaced, none of
  // which can be part of an escape it wrote. Far faster than a replace() with
  // a callback per escaped character, which was most of defaulting a set whose
  // strings are full of them. Lone surrogates are made U+FFFD first, as Go
  // decodes them (JSON.stringify would escape them instead).
  let out = JSON.stringify(wellFormed(s));
  for (const [char, escape] of HTML_ESCAPES) if (out.includes(char)) out = out.replaceAll(char, escape);
  return out;
}

/** What Go's json.Marshal escapes that JSON.stringify leaves raw. */
const HTML_ESCAPES: readonly (readonly [string, string])[] = [
  ['<', '\\u003c'],
  ['>', '\\u003e'],
  ['&', '\\u0026'],
  ['\u2028', '\\u2028'],
  ['\u2029', '\\u2029'],
];

/** What {@link goJsonString} must rewrite: an escaped character, or a surrogate that may be a lone one. */
// eslint-disable-next-line no-control-regex -- control characters are what must be escaped
const NEEDS_ESCAPE = /["\\\u0000-\u001f<>&\u2028\u2029\uD800-\uDFFF]/;

/** Go sorts map keys by bytes (UTF-8), which differs from UTF-16 order only for astral characters. */
export function compareGoStrings(a: string, b: string): number {
  // UTF-16 order is byte order up to the first difference unless a surrogate
  // (U+D800 and above, where astral characters sort after U+E000-U+FFFF) is
  // involved; only then are the strings encoded, as sorting runs per pair.
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i < n) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x < 0xd800 && y < 0xd800) return x - y;
  } else {
    if (a.length === b.length) return 0;
    // One is a prefix of the other: so are their bytes, unless a surrogate pair is split there.
    const last = n === 0 ? 0 : a.charCodeAt(n - 1);
    if (last < 0xd800 || last > 0xdbff) return a.length - b.length;
  }
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function isEmpty(type: GoType, value: GoValue): boolean {
  switch (type.kind) {
    case 'string':
      return value === undefined || value === '';
    case 'bool':
      return value !== true;
    case 'int32':
    case 'int64':
      return value === undefined || value === 0n;
    case 'ptr':
      return value === undefined;
    case 'slice':
      return !Array.isArray(value) || value.length === 0;
    case 'map':
      return !(value instanceof Map) || value.size === 0;
    case 'struct':
    case 'quantity':
    case 'intOrString':
      return false;
  }
}

function isQuantity(value: GoValue): value is Quantity {
  return typeof value === 'object' && !Array.isArray(value) && !(value instanceof Map);
}

/** `"name":` for each struct field, the way Go prints the key; fields are module constants, so this stays small. */
const fieldKeys = new WeakMap<GoField, string>();

function fieldKey(field: GoField): string {
  let key = fieldKeys.get(field);
  if (key === undefined) {
    key = `${goJsonString(field.name)}:`;
    fieldKeys.set(field, key);
  }
  return key;
}

/** The bytes json.Marshal writes for a value of `type` (from `decodeGo`). */
export function encodeGo(type: GoType, value: GoValue): string {
  switch (type.kind) {
    case 'string':
      return goJsonString(typeof value === 'string' ? value : '');
    case 'bool':
      return value === true ? 'true' : 'false';
    case 'int32':
    case 'int64':
      return typeof value === 'bigint' ? value.toString() : '0';
    case 'quantity':
      return goJsonString(isQuantity(value) ? canonicalQuantity(value) : '0');
    case 'intOrString':
      return typeof value === 'string' ? goJsonString(value) : typeof value === 'bigint' ? value.toString() : '0';
    case 'ptr':
      return value === undefined ? 'null' : encodeGo(type.elem, value);
    // Concatenation rather than map/join: no array per value on this hot path.
    case 'slice': {
      if (!Array.isArray(value)) return 'null';
      let out = '[';
      for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + encodeGo(type.elem, value[i]);
      return `${out}]`;
    }
    case 'map': {
      if (!(value instanceof Map)) return 'null';
      const keys = [...value.keys()].sort(compareGoStrings);
      let out = '{';
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as string;
        out += `${i === 0 ? '' : ','}${goJsonString(k)}:${encodeGo(type.elem, value.get(k))}`;
      }
      return `${out}}`;
    }
    case 'struct': {
      const fields = value instanceof Map ? value : undefined;
      let out = '{';
      let first = true;
      for (const field of type.fields) {
        const v = fields?.get(field.name);
        if (field.omitempty && isEmpty(field.type, v)) continue;
        out += (first ? '' : ',') + fieldKey(field) + encodeGo(field.type, v);
        first = false;
      }
      return `${out}}`;
    }
  }
}

/** Decode then encode: what a Go program prints after reading `json` into `type`. */
export function marshalGo(type: GoType, json: unknown, options?: GoJsonOptions): string {
  return encodeGo(type, decodeGo(type, json, options));
}
