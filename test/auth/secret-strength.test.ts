import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { CallerSecretError } from '../../lib/auth/caller-auth.ts';
import { checkSecretStrength, estimatedSecretBits, MIN_SECRET_BITS } from '../../lib/auth/secret-strength.ts';

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters drawn uniformly from `alphabet` (rejection sampling, no modulo bias). */
function randomFrom(alphabet: string, length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 256 - (256 % alphabet.length) && out.length < length) out += alphabet.charAt(byte % alphabet.length);
    }
  }
  return out;
}

describe('estimatedSecretBits', () => {
  // zxcvbn costs some 40 ms of CPU a check: a sample here, the large counts in docs/RELIABILITY.md.
  it('passes real secrets (32 random bytes in base64url) and secrets shaped as the CDK stack generates them', () => {
    let lowest = Infinity;
    for (let i = 0; i < 40; i++) lowest = Math.min(lowest, estimatedSecretBits(randomBytes(32).toString('base64url')));
    // Typical is about 142 bits (zxcvbn prices a random character at 10 guesses); the lowest of thousands about 134.
    expect(lowest).toBeGreaterThan(MIN_SECRET_BITS);
    for (let i = 0; i < 10; i++) {
      expect(estimatedSecretBits(randomFrom(ALNUM, 64))).toBeGreaterThan(MIN_SECRET_BITS * 1.5);
      expect(estimatedSecretBits(randomBytes(32).toString('hex'))).toBeGreaterThan(MIN_SECRET_BITS * 1.5);
    }
  });

  it.each([
    { why: 'a made-up sentence in PascalCase with a year (issue 36)', secret: 'ThisIsMyVerySecretWebhookTokenForTheCluster2026' },
    { why: 'repeated words, environment and region in snake_case (issue 36)', secret: 'admin_admin_webhook_secret_prod_eu_west_1_k8s' },
    { why: 'a made-up phrase in snake_case', secret: 'my_company_kubernetes_webhook_token_production_v2' },
    { why: 'the same phrase in camelCase', secret: 'myCompanyKubernetesWebhookTokenProductionV2' },
    { why: 'the same phrase in kebab-case with a year', secret: 'my-company-kubernetes-webhook-token-production-2024' },
    { why: 'a sentence with spaces', secret: 'please let only the cluster call this webhook' },
    { why: 'common passwords strung together', secret: 'password123-qwerty-letmein-iloveyou-dragon-monkey' },
    { why: 'names and dates', secret: 'michael_jennifer_1984-12-31_robert_elizabeth_19850101' },
    { why: 'a keyboard walk, twice', secret: 'qwertyuiopasdfghjklzxcvbnm-qwertyuiopasdfghjklzxcvbnm' },
    { why: 'one character 43 times', secret: 'a'.repeat(43) },
    { why: 'one character 200 times', secret: 'Z'.repeat(200) },
    { why: 'two characters alternating', secret: 'ab'.repeat(22) },
    { why: '"abc" repeated', secret: 'abc'.repeat(15) },
    { why: 'a random 8-character block repeated', secret: randomFrom(BASE64URL, 8).repeat(6) },
    { why: 'a random 16-character block repeated', secret: randomFrom(BASE64URL, 16).repeat(3) },
    { why: 'the base64url alphabet in order', secret: BASE64URL.slice(0, 43) },
    { why: 'the whole alphabet in order', secret: BASE64URL },
    { why: 'digits counting up, repeated', secret: '0123456789'.repeat(5) },
    { why: 'every other letter', secret: 'acegikmoqsuwy'.repeat(4) },
    { why: 'a descending run', secret: 'zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJ' },
    { why: 'random over a 2-character alphabet', secret: randomFrom('01', 64) },
    { why: 'random over a 4-character alphabet', secret: randomFrom('ACGT', 43) },
    { why: 'a word padded with one character', secret: `password${'0'.repeat(40)}` },
    { why: 'a short random part padded', secret: `${randomFrom(BASE64URL, 12)}${'-'.repeat(31)}` },
  ])('refuses $why', ({ secret }) => {
    expect(estimatedSecretBits(secret)).toBeLessThan(MIN_SECRET_BITS);
  });

  it.each([
    { why: '32 random bytes in base64url', secret: 'q3Vh0Zk_9tXc2LwRb7NmA1yPj-4sFoG8dUeKiT6nHxE' },
    { why: '32 random bytes in hex', secret: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08' },
    { why: '64 random letters and digits (the CDK stack\'s form)', secret: 'Xk2pQ9vLr7TzW4mNc8Hb3JyF6dGs1AeKu5RoVi0PqtZxYwBnCjMlEhUgSfDaO7Ik' },
    { why: 'ten words picked at random (diceware)', secret: 'correct-horse-battery-staple-orbit-lantern-mango-quiver-tundra-velvet' },
  ])('passes $why', ({ secret }) => {
    expect(estimatedSecretBits(secret)).toBeGreaterThanOrEqual(MIN_SECRET_BITS);
  });

  it('judges a hostile megabyte fast, by its first characters', () => {
    // Made before the clock starts: only the estimate is timed, not the making of a megabyte of text.
    const huge = [randomFrom(BASE64URL, 1_000_000), 'a'.repeat(1_000_000), '1'.repeat(1_000_000), '4310'.repeat(250_000), 'word_'.repeat(200_000)];
    const started = process.cpuUsage();
    const bits = huge.map((value) => estimatedSecretBits(value));
    const used = process.cpuUsage(started);
    // CPU time, not wall time, so that a loaded machine does not fail it: each costs what 128 characters do
    // (tens of milliseconds); zxcvbn on the whole of one would not finish in minutes.
    expect((used.user + used.system) / 1000).toBeLessThan(3_000);
    expect(bits[0]).toBeGreaterThan(MIN_SECRET_BITS);
    expect(bits.slice(1).every((b) => b < MIN_SECRET_BITS)).toBe(true);
  });
});

describe('checkSecretStrength refuses a predictable secret', () => {
  it('refuses the two guessable secrets of issue 36 with the predictable message', () => {
    for (const secret of ['ThisIsMyVerySecretWebhookTokenForTheCluster2026', 'admin_admin_webhook_secret_prod_eu_west_1_k8s']) {
      expect(() => {
        checkSecretStrength(secret, 'WEBHOOK_SECRET');
      }).toThrow(/^WEBHOOK_SECRET is too predictable \(words, names, dates, keyboard runs, .*about \d+ random bits, at least 128 needed/);
    }
  });

  it('refuses a megabyte secret by its length, before judging it', () => {
    const secret = randomFrom(BASE64URL, 1_000_000);
    expect(() => {
      checkSecretStrength(secret, 'WEBHOOK_SECRET');
    }).toThrow(/^WEBHOOK_SECRET is 1000000 characters; it must be at most 1024 /);
  });

  it('refuses a phrase of words a person made up', () => {
    expect(() => {
      checkSecretStrength('my_company_kubernetes_webhook_token_production_v2', 'WEBHOOK_SECRET');
    }).toThrow(/^WEBHOOK_SECRET is too predictable \(words, /);
  });

  // Issue 45, item 6: long enough to add up past the floor word by word (141 and 130 bits whole), but not the generated form.
  it.each(['sidecarset-webhook-secret-prod-eu-west-1-cluster-a', 'my_company_name_kubernetes_webhook_secret_2026_v2'])('refuses the descriptive secret %s by its first 43 characters, saying why and how to generate one', (secret) => {
    expect(estimatedSecretBits(secret)).toBeGreaterThan(MIN_SECRET_BITS);
    expect(() => {
      checkSecretStrength(secret, 'WEBHOOK_SECRET');
    }).toThrow(/^WEBHOOK_SECRET is too predictable \(.*about \d+ random bits, at least 128 needed in its first 43 characters, where a generated secret's 32 random bytes are, however long the rest \(a phrase is not a secret\)\); generate one with: openssl rand/);
  });

  it('passes generated secrets of 32 and 64 random bytes, and a generated secret with a suffix', () => {
    for (let i = 0; i < 20; i++) {
      for (const secret of [randomBytes(32).toString('base64url'), randomBytes(64).toString('base64url'), `${randomBytes(32).toString('base64url')}-prod-eu-west-1`]) {
        expect(() => {
          checkSecretStrength(secret, 'WEBHOOK_SECRET');
        }).not.toThrow();
      }
    }
  });

  it('with a message saying how to generate one, and without quoting the value', () => {
    const secret = 'a'.repeat(43);
    const check = () => {
      checkSecretStrength(secret, 'WEBHOOK_SECRET');
    };
    expect(check).toThrow(CallerSecretError);
    expect(check).toThrow(/^WEBHOOK_SECRET is too predictable .*at least 128 needed.*openssl rand -base64 32 \| tr '\+\/' '-_' \| tr -d '='.*randomBytes\(32\)\.toString\('base64url'\)/);
    expect(check).not.toThrow(secret);
  });
});
