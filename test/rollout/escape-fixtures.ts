/**
 * A SidecarSet holding every character Go's encoding/json escapes where
 * JavaScript's JSON.stringify does not (`&`, `<`, `>`, U+2028, U+2029), and
 * text outside ASCII, which both write as it is: in the command, the args
 * and the env, as a shell sidecar holds them.
 */
import { defaultSidecarSet } from '../../lib/sidecarset/defaults.ts';
import type { SidecarSet } from '../../lib/sidecarset/types.ts';

export const GO_ESCAPED = ['&', '<', '>', '\u2028', '\u2029'] as const;
export const NON_ASCII = 'héllo wörld 日本語 🚀';

export function shellSet(image: string, name = 'shell-agent'): SidecarSet {
  return defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, uid: `uid-${name}`, generation: 1 },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [
        {
          name: 'shell',
          image,
          command: ['sh', '-c', 'echo a && echo b > /tmp/x; cat < /tmp/x'],
          args: ['--sep=\u2028', '--para=\u2029', `--greeting=${NON_ASCII}`],
          env: [
            { name: 'PIPELINE', value: 'a&&b<c>d' },
            { name: 'SEPARATORS', value: 'line\u2028para\u2029end' },
            { name: 'GREETING', value: NON_ASCII },
          ],
        },
      ],
      updateStrategy: { type: 'RollingUpdate' },
    },
  });
}

/** The API server's JSON of stored bytes: Go's encoder escapes these five wherever they stand raw. */
export function goReencoded(bytes: string): string {
  return bytes.replace(/[&<>\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
