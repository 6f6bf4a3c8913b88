/**
 * A sidecar's securityContext, as Kruise 1.8 gets it checked by Kubernetes
 * 1.30's ValidateSecurityContext: whole messages, byte for byte.
 */
import { describe, expect, it } from '@jest/globals';
import { errorsFor } from './validate-fixture.ts';

type Row = [string, Record<string, unknown>, string[]];
const sc = 'spec.containers.0.securityContext';
const at = 'spec.containers[0].securityContext';

describe('securityContext', () => {
  it.each<Row>([
    ['accepts a privileged container (Kruise runs with --allow-privileged)', { [sc]: { privileged: true } }, []],
    ['accepts a non-root user and group', { [sc]: { runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true } }, []],
    ['rejects a negative user', { [`${sc}.runAsUser`]: -1 }, [`${at}.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive`]],
    ['rejects a group above the range', { [`${sc}.runAsGroup`]: 2147483648 }, [`${at}.runAsGroup: Invalid value: 2147483648: must be between 0 and 2147483647, inclusive`]],
    ['rejects an unknown procMount', { [`${sc}.procMount`]: 'Masked' }, [`${at}.procMount: Unsupported value: "Masked": supported values: "Default", "Unmasked"`]],
    // The pod Kruise validates shares the host's user namespace.
    ['rejects an Unmasked procMount', { [`${sc}.procMount`]: 'Unmasked' }, [`${at}.procMount: Invalid value: "Unmasked": \`hostUsers\` must be false to use \`Unmasked\``]],
    ['requires a seccomp profile type', { [`${sc}.seccompProfile`]: {} }, [`${at}.seccompProfile.type: Required value: type is required when seccompProfile is set`]],
    [
      'rejects an unknown seccomp profile type',
      { [`${sc}.seccompProfile`]: { type: 'Strict' } },
      [`${at}.seccompProfile.type: Unsupported value: "Strict": supported values: "Localhost", "RuntimeDefault", "Unconfined"`],
    ],
    [
      'requires a localhost seccomp profile path',
      { [`${sc}.seccompProfile`]: { type: 'Localhost' } },
      [`${at}.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost`],
    ],
    [
      'rejects an absolute localhost seccomp profile',
      { [`${sc}.seccompProfile`]: { type: 'Localhost', localhostProfile: '/etc/p.json' } },
      [`${at}.seccompProfile.localhostProfile: Invalid value: "/etc/p.json": must be a relative path`],
    ],
    ['accepts a runtime default AppArmor profile', { [`${sc}.appArmorProfile`]: { type: 'RuntimeDefault' } }, []],
    [
      'rejects a padded AppArmor profile',
      { [`${sc}.appArmorProfile`]: { type: 'Localhost', localhostProfile: ' p ' } },
      [`${at}.appArmorProfile.localhostProfile: Invalid value: " p ": must not be padded with whitespace`],
    ],
    [
      'rejects an AppArmor localhost profile over 4095 bytes, in Kubernetes 1.32’s words (Kruise 1.9)',
      { [`${sc}.appArmorProfile`]: { type: 'Localhost', localhostProfile: 'p'.repeat(4096) } },
      [`${at}.appArmorProfile.localhostProfile: Too long: may not be more than 4095 bytes`],
    ],
    [
      'rejects an AppArmor localhost profile beside another type',
      { [`${sc}.appArmorProfile`]: { type: 'Unconfined', localhostProfile: 'p' } },
      [`${at}.appArmorProfile.localhostProfile: Invalid value: "p": can only be set when AppArmor type is Localhost`],
    ],
    [
      'rejects an empty Windows user name',
      { [`${sc}.windowsOptions`]: { runAsUserName: '' } },
      [`${at}.windowsOptions.runAsUserName: Invalid value: "": runAsUserName cannot be an empty string`],
    ],
    [
      'rejects a Windows user name with a forbidden character',
      { [`${sc}.windowsOptions`]: { runAsUserName: 'DOMAIN\\us:er' } },
      [`${at}.windowsOptions.runAsUserName: Invalid value: "DOMAIN\\\\us:er": runAsUserName's User cannot contain the following characters: "/\\:;|=,+*?<>@[]`],
    ],
    ['accepts a Windows user name with a domain', { [`${sc}.windowsOptions`]: { runAsUserName: 'NT AUTHORITY\\NETWORK SERVICE' } }, []],
    [
      'rejects two backslashes in a Windows user name',
      { [`${sc}.windowsOptions`]: { runAsUserName: 'a\\b\\c' } },
      [`${at}.windowsOptions.runAsUserName: Invalid value: "a\\\\b\\\\c": runAsUserName cannot contain more than one backslash`],
    ],
  ])('%s', (_name, changes, expected) => {
    expect(errorsFor(changes)).toEqual(expected);
  });

  it('rejects privilege escalation turned off for a privileged container', () => {
    const errors = errorsFor({ [sc]: { privileged: true, allowPrivilegeEscalation: false } });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^spec\.containers\[0\]\.securityContext: Invalid value: .*: cannot set `allowPrivilegeEscalation` to false and `privileged` to true$/);
  });

  it('rejects privilege escalation turned off beside CAP_SYS_ADMIN', () => {
    const errors = errorsFor({ [sc]: { allowPrivilegeEscalation: false, capabilities: { add: ['CAP_SYS_ADMIN'] } } });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/: cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN$/);
  });
});
