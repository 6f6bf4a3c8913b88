/**
 * Which cluster a command talks to, said before its answer: a command run
 * against the wrong cluster (an exported KUBECONFIG of production while the
 * user meant `npm start`'s) must say so, not fail there seconds later
 * without naming it.
 */

/** A cluster as a kubeconfig names it: its current context and that context's server. */
export interface ClusterName {
  context: string;
  server: string;
}

/**
 * The line naming the cluster (and how it was chosen), and when a local
 * cluster of this checkout runs elsewhere than that, a second line saying
 * so and how to choose it.
 */
export function clusterLines(name: ClusterName, how: string, local: { name: ClusterName; kubeconfig: string } | undefined): string[] {
  const lines = [`cluster: context ${JSON.stringify(name.context)}, server ${name.server} (${how})`];
  if (local !== undefined && local.name.server !== name.server) {
    lines.push(
      `note: npm start's embedded cluster of this checkout runs at ${local.name.server}, but this command talks to ${name.server}; ` +
        `to use the local one, give --kubeconfig ${local.kubeconfig}`,
    );
  }
  return lines;
}
