/** docs/METRICS.md names every metric the functions write, under the names they write. */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ALL_METRICS, REVIEW_OUTCOMES } from '../../lib/metrics/catalogue.ts';
import { ROLLOUT_STATES } from '../../lib/status-sync/rollout-state.ts';
import { DEPRECATED_PROMETHEUS_NAMES, PROMETHEUS_NAMES } from '../../lib/metrics/registry-recorder.ts';
import { metricAlarmSpecs } from '../../infra/aws/dashboard.ts';

const section = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'METRICS.md'), 'utf8');

describe('docs/METRICS.md', () => {
  it('exists', () => {
    expect(section.length).toBeGreaterThan(1000);
  });

  it.each(ALL_METRICS.map((m) => m.name))('documents the CloudWatch metric %s', (name) => {
    expect(section).toContain(`\`${name}\``);
  });

  it.each([...Object.values(PROMETHEUS_NAMES), ...Object.values(DEPRECATED_PROMETHEUS_NAMES)])('documents the /metrics family %s', (name) => {
    expect(section).toContain(`\`${name}`);
  });

  it.each([...REVIEW_OUTCOMES, ...ROLLOUT_STATES])('names the dimension value %s', (value) => {
    expect(section).toContain(`\`${value}\``);
  });

  it.each(metricAlarmSpecs('ServerlessSidecarSet').map((a) => a.id.replace(/Alarm$/, '')))('says what to do when %s fires', (alarm) => {
    expect(section).toContain(`| \`${alarm}\` |`);
  });
});
