/** The two routes of the HTTP benchmark's server (see http-server.ts for why the floor sits where it does). */
import { SECRET } from '../../testkit/reviews.ts';

export const MEASURED_PATH = `/pod-inject/${SECRET}`;
export const FLOOR_PATH = `/sidecarset-default/${SECRET}`;
