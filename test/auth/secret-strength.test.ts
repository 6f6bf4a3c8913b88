import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { CallerSecretError, checkSecret } from '../../lib/auth/caller-auth.ts';
import { estimatedSecretBits, MIN_SECRET_BITS } from '../../lib/auth/secret-strength.ts';

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
  it('passes every one of 20,000 real secrets (32 random bytes in base64url) with a wide margin', () => {
    let lowest = Infinity;
    for (let i = 0; i < 20_000; i++) lowest = Math.min(lowest, estimatedSecretBits(randomBytes(32).toString('base64url')));
    // Typical is about 200 bits; the lowest of 20,000 still far above the threshold.
    expect(lowest).toBeGreaterThan(MIN_SECRET_BITS + 20);
  });

  it('passes secrets shaped as the CDK stack generates them (64 letters and digits) and long hex ones', () => {
    for (let i = 0; i < 2_000; i++) {
      expect(estimatedSecretBits(randomFrom(ALNUM, 64))).toBeGreaterThan(MIN_SECRET_BITS * 2);
      // The lowest of 300,000 such hex secrets measured 186 bits: 1.5x (192) failed now and then; 1.25x keeps a wide margin.
      expect(estimatedSecretBits(randomBytes(32).toString('hex'))).toBeGreaterThan(MIN_SECRET_BITS * 1.25);
    }
  });

  it.each([
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
    { why: 'a made-up phrase in snake_case', secret: 'my_company_kubernetes_webhook_token_production_v2' },
    { why: 'the same phrase in camelCase', secret: 'myCompanyKubernetesWebhookTokenProductionV2' },
    { why: 'the same phrase in kebab-case with a year', secret: 'my-company-kubernetes-webhook-token-production-2024' },
    { why: 'a sentence with spaces', secret: 'please let only the cluster call this webhook' },
  ])('refuses $why: its words count as words, not as random letters', ({ secret }) => {
    expect(estimatedSecretBits(secret)).toBeLessThan(MIN_SECRET_BITS);
  });

  it('passes ten words picked at random (about 130 bits as an attacker counts them) and a generated secret', () => {
    const words = ['correct', 'horse', 'battery', 'staple', 'orbit', 'lantern', 'mango', 'quiver', 'tundra', 'velvet'];
    expect(estimatedSecretBits(words.join('-'))).toBeGreaterThanOrEqual(MIN_SECRET_BITS);
    expect(estimatedSecretBits(randomBytes(32).toString('base64url'))).toBeGreaterThan(MIN_SECRET_BITS + 20);
  });

  it('bounds the work on a huge value', () => {
    // Made before the clock starts: only the estimate is timed, not the making of a megabyte of random text.
    const huge = [randomFrom(BASE64URL, 1_000_000), 'a'.repeat(1_000_000), 'word_'.repeat(200_000)];
    const started = performance.now();
    for (const value of huge) estimatedSecretBits(value);
    // A 256-character window costs microseconds; a second is 1000x that.
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('checkSecret refuses a predictable secret', () => {
  it('refuses a phrase of words a person made up', () => {
    expect(() => {
      checkSecret('my_company_kubernetes_webhook_token_production_v2', 'WEBHOOK_SECRET');
    }).toThrow(/^WEBHOOK_SECRET is too predictable \(words, /);
  });


  it('with a message saying how to generate one, and without quoting the value', () => {
    const secret = 'a'.repeat(43);
    const check = () => {
      checkSecret(secret, 'WEBHOOK_SECRET');
    };
    expect(check).toThrow(CallerSecretError);
    expect(check).toThrow(/^WEBHOOK_SECRET is too predictable .*at least 128 needed.*openssl rand -base64 32 \| tr '\+\/' '-_' \| tr -d '='.*randomBytes\(32\)\.toString\('base64url'\)/);
    expect(check).not.toThrow(secret);
  });
});
