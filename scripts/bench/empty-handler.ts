/**
 * The empty handler of the cold-start benchmark: a Function URL handler that
 * answers without reading anything, bundled like the functions, so that its
 * cold start is the platform's share (Node, module loading, the event).
 */
export const handler = (): Promise<{ statusCode: number; headers: Record<string, string>; body: string }> =>
  Promise.resolve({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' });
