/** What a reliability scenario reports: named figures, printed as a table in docs/RELIABILITY.md. */
export type Figures = Record<string, number | string>;
