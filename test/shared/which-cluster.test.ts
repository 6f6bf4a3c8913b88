import { describe, expect, it } from '@jest/globals';
import { clusterLines } from '../../functions/shared/which-cluster.ts';

const prod = { context: 'prod-admin', server: 'https://prod.example:6443' };
const local = { name: { context: 'admin', server: 'https://127.0.0.1:38961' }, kubeconfig: '.cache/local-cluster/kubeconfig' };

describe('the cluster a command talks to, named before its answer', () => {
  it('names the context, the server and how it was chosen', () => {
    expect(clusterLines(prod, 'KUBECONFIG=/home/u/prod.yaml', undefined)).toEqual(['cluster: context "prod-admin", server https://prod.example:6443 (KUBECONFIG=/home/u/prod.yaml)']);
  });

  it('says when npm start\'s cluster of this checkout runs and the command goes elsewhere, and how to choose it', () => {
    const lines = clusterLines(prod, 'KUBECONFIG=/home/u/prod.yaml', local);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe(
      "note: npm start's embedded cluster of this checkout runs at https://127.0.0.1:38961, but this command talks to https://prod.example:6443; to use the local one, give --kubeconfig .cache/local-cluster/kubeconfig",
    );
  });

  it('says nothing more when the command talks to that local cluster', () => {
    expect(clusterLines(local.name, 'the embedded cluster of npm start', local)).toEqual(['cluster: context "admin", server https://127.0.0.1:38961 (the embedded cluster of npm start)']);
  });
});
