/**
 * The tag of a container image reference, as Kubernetes' parsers.ParseImageName
 * (docker/distribution reference grammar) sees it. Used to default
 * imagePullPolicy the way the API server does.
 */

const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const NAME = `(?:${DOMAIN}/)?${COMPONENT}(?:/${COMPONENT})*`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const REFERENCE = new RegExp(`^(${NAME})(?::(${TAG}))?(?:@(${DIGEST}))?$`);

/**
 * The image's tag: its explicit tag; `latest` when it has neither tag nor digest;
 * `''` when it has only a digest or cannot be parsed (ParseImageName's error case).
 */
export function imageTag(image: string): string {
  const m = REFERENCE.exec(image);
  if (m === null || (m[1]?.length ?? 0) > 255) return '';
  const [, , tag, digest] = m;
  if (tag !== undefined) return tag;
  return digest === undefined ? 'latest' : '';
}

const LEGACY_DEFAULT_DOMAIN = 'index.docker.io';
const DEFAULT_DOMAIN = 'docker.io';

/**
 * The fully qualified form of an image reference, as Docker's
 * ParseNormalizedNamed + TagNameOnly print it: registry `docker.io` when none
 * is named (`index.docker.io` too), `library/` for a single-component Docker
 * Hub name, tag `latest` when there is neither tag nor digest. So `nginx`,
 * `nginx:latest` and `docker.io/library/nginx:latest` all give the same text,
 * as do an image and the normalised name a runtime reports for it
 * (sidecarset.md §7). A reference that does not parse is returned unchanged.
 */
export function normalizeImageReference(image: string): string {
  const m = REFERENCE.exec(image);
  if (m === null) return image;
  const [, name = '', tag, digest] = m;
  const slash = name.indexOf('/');
  const first = slash < 0 ? '' : name.slice(0, slash);
  // Docker's rule: the first component is a registry when it looks like a host.
  const hasDomain = first !== '' && (first.includes('.') || first.includes(':') || first === 'localhost' || first !== first.toLowerCase());
  let domain = hasDomain ? first : DEFAULT_DOMAIN;
  let path = hasDomain ? name.slice(slash + 1) : name;
  if (domain === LEGACY_DEFAULT_DOMAIN) domain = DEFAULT_DOMAIN;
  if (domain === DEFAULT_DOMAIN && !path.includes('/')) path = `library/${path}`;
  const tagPart = tag !== undefined ? `:${tag}` : digest === undefined ? ':latest' : '';
  return `${domain}/${path}${tagPart}${digest !== undefined ? `@${digest}` : ''}`;
}

/** The repository and digest of a reference (`scheme://` prefix, as in an imageID, ignored); undefined without a digest. */
export function imageDigestParts(image: string): { repository: string; digest: string } | undefined {
  // No `@`, no digest: the usual tag image skips the reference grammar (a plan asks for every pod's sidecars).
  if (!image.includes('@')) return undefined;
  const withoutScheme = image.replace(/^[a-z][a-z0-9+.-]*:\/\//, '');
  const m = REFERENCE.exec(withoutScheme);
  if (m === null || m[3] === undefined) return undefined;
  const normalized = normalizeImageReference(`${m[1] ?? ''}@${m[3]}`);
  return { repository: normalized.slice(0, normalized.lastIndexOf('@')), digest: m[3] };
}
