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
