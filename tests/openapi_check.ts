/** Placeholder until the validator lands: accepts everything. */
export function checkResponse(_m: string, _p: string, _s: number, _b: unknown): void {}
