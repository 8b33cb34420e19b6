/**
 * `--help` (or `-h`) on every task: it says what the task does and how to run it, and exits 0,
 * before doing anything (no service started, no store or key made).
 */

/** Whether a task's command line asks for its help. */
export const helpAsked = (args: readonly string[]) =>
  args.includes("--help") || args.includes("-h");

/** Prints `usage` and ends the process when `args` asks for help; else does nothing. */
export function answerHelp(args: readonly string[], usage: string): void {
  if (!helpAsked(args)) return;
  console.log(usage.trim());
  Deno.exit(0);
}
