/**
 * Runs a read-check-commit step again while a concurrent change beats its commit (the step
 * returns null). Each round reads afresh, so the step's rules see the winner's result.
 */
export async function retrying<T>(what: string, step: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 10; i++) {
    const done = await step();
    if (done !== null) return done;
  }
  throw new Error(`${what}: kept losing to concurrent changes`);
}
