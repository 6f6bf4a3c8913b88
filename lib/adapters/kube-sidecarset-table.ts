/**
 * The SidecarSets as a Table without their objects (`as=Table`,
 * `includeObject=None`): one row of printer-column cells per set, its
 * resourceVersion among them when the CRD is this project's
 * (sidecarset-delta.ts: tableVersions). A row is a few hundred bytes however
 * large the set's labels, annotations and managedFields are, so the read
 * that tells a warm review which sets changed does not grow with them.
 *
 * A list without a resourceVersion is a consistent read (k8s.io/apiserver:
 * from etcd, or from the watch cache once it has caught up with etcd's
 * current revision), and its continue tokens read the rest of that snapshot:
 * the Table holds every write that returned before it was asked for, as the
 * full list does.
 */
import { isObject, objectOf, stringOf } from '../kube/json.ts';
import { ListExpiredError } from '../ports/errors.ts';
import { apiServerAnswered, KubeApiError } from './kube-api-error.ts';
import { AnswerTooLargeError, type KubeClient } from './kube-request.ts';
import { sidecarSetsPath, type SidecarSetVersions } from './kube-sidecarsets-version.ts';
import { TABLE_ACCEPT } from './sidecarset-delta.ts';

/** Rows asked for per page: a name is at most 253 bytes, so a page stays well under {@link TABLE_PAGE_MAX_BYTES}. */
export const TABLE_PAGE_ROWS = 500;
/** The cap on one page: a server that sent whole sets instead of rows is cut off here, and the caller lists metadata instead. */
export const TABLE_PAGE_MAX_BYTES = 4 * 1024 * 1024;
/** The attempts at a Table whose continue token keeps expiring. */
const MAX_TABLE_ATTEMPTS = 3;

/** One page's rows and what it says of the rest; or the body as sent when it is not a Table. */
type TablePage = { rows: unknown[]; columnDefinitions: unknown[]; next: string | undefined } | { other: unknown };

async function tablePage(client: KubeClient, path: string, operation: string, token: string | undefined, signal: AbortSignal): Promise<TablePage> {
  const query = { includeObject: 'None', limit: String(TABLE_PAGE_ROWS), ...(token === undefined ? {} : { continue: token }) };
  let answer;
  try {
    answer = await client.request({ method: 'GET', path, query, operation, signal, accept: TABLE_ACCEPT, maxBytes: TABLE_PAGE_MAX_BYTES });
  } catch (error) {
    if (error instanceof AnswerTooLargeError) return { other: undefined };
    throw error;
  }
  if (answer.status === 410 && token !== undefined) throw new ListExpiredError(`the Table's continue token expired`);
  if (answer.status < 200 || answer.status > 299) throw apiServerAnswered(operation, answer.status, answer.body);
  const body = answer.body;
  if (typeof body === 'string') throw new KubeApiError(operation, 'the answer is not JSON', answer.status);
  if (!isObject(body) || body.kind !== 'Table' || !Array.isArray(body.rows) || !Array.isArray(body.columnDefinitions)) return { other: body };
  const next = stringOf(objectOf(body.metadata)?.continue);
  return { rows: body.rows, columnDefinitions: body.columnDefinitions, next: next === undefined || next === '' ? undefined : next };
}

/**
 * Every SidecarSet as a row of the Table (`kind`, `columnDefinitions` and
 * every page's `rows`, assembled as one Table), or the answer as sent when
 * the server answered something else (a full list: the caller decides what
 * it is worth; undefined when it passed the page cap).
 * @throws KubeApiError when the API server fails it (404: no SidecarSet CRD), ListExpiredError after repeated expired tokens.
 */
export async function listSidecarSetTable(client: KubeClient, versions: SidecarSetVersions, operation: string, signal: AbortSignal): Promise<unknown> {
  const path = sidecarSetsPath(await versions.current(signal));
  for (let attempt = 1; ; attempt++) {
    try {
      const rows: unknown[] = [];
      let columnDefinitions: unknown[] | undefined;
      let token: string | undefined;
      do {
        const page = await tablePage(client, path, operation, token, signal);
        if ('other' in page) return page.other;
        columnDefinitions ??= page.columnDefinitions;
        for (const row of page.rows) rows.push(row);
        token = page.next;
      } while (token !== undefined);
      return { kind: 'Table', columnDefinitions, rows };
    } catch (error) {
      if (error instanceof KubeApiError && error.code === 404) versions.forget();
      if (!(error instanceof ListExpiredError) || attempt >= MAX_TABLE_ATTEMPTS) throw error;
    }
  }
}
