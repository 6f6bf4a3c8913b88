/**
 * docs/RELIABILITY.md is regenerated whole by `npm run reliability`: what is
 * measured outside its cases lives in scripts/reliability/hand-notes.ts, and
 * every regeneration must print it (hand edits of the document were lost).
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { APPENDIX, CASE_NOTES } from '../../scripts/reliability/hand-notes.ts';
import { renderDocument, type CaseResult } from '../../scripts/reliability/report.ts';

const run = { command: 'npm run reliability', date: new Date(0), commit: 'abc', machine: { cpu: 'c', cores: 2, memoryGiB: 4, os: 'Linux', node: 'v22' }, quick: false, seed: 1, totalSeconds: 1 };

describe('the regenerated reliability document', () => {
  it('keeps a case’s hand-kept measurements after its claim, and the hand-written sections at the end', () => {
    const result: CaseResult = { section: 'load', name: '40 MiB of SidecarSets', claim: 'the claim', passed: true, durationSeconds: 1, output: [{ run: 'x' }] };
    const doc = renderDocument(run, [result]);
    const note = CASE_NOTES['40 MiB of SidecarSets'] ?? '';
    expect(note).toContain('first SidecarSet page');
    expect(doc.indexOf(note)).toBeGreaterThan(doc.indexOf('the claim'));
    for (const section of APPENDIX) expect(doc.endsWith(`${APPENDIX.at(-1) ?? ''}\n`) && doc.includes(section)).toBe(true);
    expect(doc).toContain('## The reconciler\'s credential against admission and pods');
  });

  it('keeps its hand notes in docs/RELIABILITY.md word for word (an edit made in the document alone would be lost by the next run)', () => {
    const doc = readFileSync('docs/RELIABILITY.md', 'utf8');
    for (const [name, note] of Object.entries(CASE_NOTES)) expect({ name, inDocument: doc.includes(note.trim()) }).toEqual({ name, inDocument: true });
    for (const section of APPENDIX) expect({ section: section.split('\n')[0], inDocument: doc.includes(section.trim()) }).toEqual({ section: section.split('\n')[0], inDocument: true });
  });
});
