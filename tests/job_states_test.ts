/**
 * A delivery job's states and moves (core/job_states.ts) are drawn in ARCHITECTURE.md and marked
 * in the modules that decide them, the three alike; what they write is written by kv/job_moves.ts
 * alone; and no state but `settled` is a dead end, where a job would be lost.
 */
import assert from "node:assert/strict";
import { JOB_MOVES, type JobState } from "../core/job_states.ts";
import { serviceSources } from "./service_sources.ts";

const root = new URL("../", import.meta.url);
const cells = (line: string) => line.split("|").slice(1, -1).map((c) => c.trim());

Deno.test("job states: ARCHITECTURE.md draws every move as core/job_states.ts has it", async () => {
  const text = await Deno.readTextFile(new URL("ARCHITECTURE.md", root));
  const drawn = text.split("\n").filter((l) => /^\| `\w+` +\|/.test(l)).map(cells);
  const expected = Object.entries(JOB_MOVES).map(([name, m]) => [
    `\`${name}\``,
    m.from.length > 0 ? m.from.join(", ") : "(a commit)",
    m.to,
    `\`${m.by}\``,
    m.when,
  ]);
  assert.deepEqual(drawn, expected);
});

Deno.test("job states: each module marks the moves the table says it makes, and no others", async () => {
  const marked = new Map<string, Set<string>>();
  for (const file of new Set(Object.values(JOB_MOVES).map((m) => m.by))) {
    const text = (await Deno.readTextFile(new URL(file, root))).replace(/\n\s*(\/\/|\*) ?/g, " ");
    const names = [...text.matchAll(/[Jj]ob moves? ((?:"\w+"(?:,? and |, )?)+)/g)]
      .flatMap((m) => [...m[1].matchAll(/"(\w+)"/g)].map((n) => n[1]));
    marked.set(file, new Set(names));
  }
  for (const [name, move] of Object.entries(JOB_MOVES)) {
    assert.ok(marked.get(move.by)!.has(name), `${move.by} marks job move "${name}"`);
  }
  for (const [file, names] of marked) {
    for (const name of names) {
      assert.equal(JOB_MOVES[name as keyof typeof JOB_MOVES]?.by, file, `"${name}" in ${file}`);
    }
  }
});

Deno.test("job states: every state is reached, and every one but settled has a way on", () => {
  const moves = Object.values(JOB_MOVES);
  const states: JobState[] = ["handed", "waiting", "free", "leased", "in_flight", "settled"];
  for (const s of states) {
    assert.ok(moves.some((m) => m.to === s), `${s} is reached`);
    if (s !== "settled") {
      assert.ok(moves.some((m) => (m.from as readonly JobState[]).includes(s)), `${s} moves on`);
    }
  }
});

/**
 * A write naming a job row, a handed-jobs record, a job count or the signal that free jobs wait,
 * or deleting a prefix of them.
 */
const JOB_WRITE =
  /\.(?:set|sum|delete|max|min)\(\s*keys\.(?:job|handedJob|jobsCreated|jobsSettled|deliverySignal)\(|deleteAll\([^)]*keys\.(?:jobs|handedJobs)\(/;

Deno.test("job states: only kv/job_moves.ts writes a job row, a handed-jobs record, a count or the signal", async () => {
  const writers = [...await serviceSources()]
    .filter(([path, text]) => path !== "kv/job_moves.ts" && JOB_WRITE.test(text))
    .map(([path]) => path);
  assert.deepEqual(writers, []);
});
