/**
 * The pages whose commands test/docs/doc-commands.integration.test.ts runs:
 * the README and the pages it sends a newcomer to. A page listed here must
 * carry doctest marks (test/doc-commands/pages.test.ts checks it without a
 * cluster), so a page whose marks are removed fails rather than passes empty.
 */
export const TESTED_PAGES = [
  'README.md',
  'docs/CLI.md',
  'docs/ROLLOUT.md',
  'docs/HOT-UPGRADE.md',
  'docs/MIGRATION.md',
  'docs/CONVERSION.md',
] as const;
