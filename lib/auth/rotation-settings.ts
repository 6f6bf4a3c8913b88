/** How the webhook secret's rotation (rotation.ts) is paced. */
export interface RotationSettings {
  /** How often to rotate; 0 never does. */
  periodMs: number;
  /** How often the functions re-read the secret (WEBHOOK_SECRET_REFRESH_MS). */
  refreshMs: number;
  /** Added to each wait: clock skew, a slow re-read, the API servers' informers. */
  marginMs: number;
}

export const DEFAULT_ROTATION_PERIOD_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_ROTATION_MARGIN_MS = 60_000;
