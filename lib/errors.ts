/** The message of any thrown value: an Error's message (also across realms, where instanceof fails), else its string form. */
export function errorMessage(error: unknown): string {
  const message: unknown = typeof error === 'object' && error !== null ? (error as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message : String(error);
}
