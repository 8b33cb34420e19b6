/**
 * A delivery job's states and moves, and a Socket Mode envelope's (core/job_states.ts), are drawn
 * in ARCHITECTURE.md and marked in the modules that decide them, the three alike; what they write is written by kv/outbox/job_moves.ts
 * alone; and no state but `settled` is a dead end, where a job would be lost.
 */
import assert from "node:assert/strict";
import { ENVELOPE_MOVES, JOB_MOVES } from "../core/job_states.ts";
import { serviceSources } from "./service_sources.ts";

const root = new URL("../", import.meta.url);
const cells = (line: string) => line.split("|").slice(1, -1).map((c) => c.trim());

type Moves = Record<string, { from: readonly string[]; to: string; by: string; when: string }>;

/**
 * The two tables: a delivery job's and a Socket Mode envelope's. Each is drawn in ARCHITECTURE.md
 * after its heading, marked in its modules as `<word> move "<name>"`, and ends only in `ends`.
 */
const TABLES: { name: string; moves: Moves; heading: string; word: string; ends: string[] }[] = [
  {
    name: "job",
    moves: JOB_MOVES,
    heading: "**A delivery job's states.**",
    word: "[Jj]ob",
    ends: ["settled"],
  },
  {
    name: "envelope",
    moves: ENVELOPE_MOVES,
    heading: "**A Socket Mode envelope's states.**",
    word: "[Ee]nvelope",
    ends: ["acked", "dropped", "expired"],
  },
];

for (const t of TABLES) {
  Deno.test(`${t.name} states: ARCHITECTURE.md draws every move as core/job_states.ts has it`, async () => {
    const text = await Deno.readTextFile(new URL("ARCHITECTURE.md", root));
    const after = text.slice(text.indexOf(t.heading)).split("\n");
    const start = after.findIndex((l) => /^\| `\w+` +\|/.test(l));
    const rows = after.slice(start);
    const drawn = rows.slice(0, rows.findIndex((l) => !l.startsWith("|"))).map(cells);
    const expected = Object.entries(t.moves).map(([name, m]) => [
      `\`${name}\``,
      m.from.length > 0 ? m.from.join(", ") : "(a commit)",
      m.to,
      `\`${m.by}\``,
      m.when,
    ]);
    assert.deepEqual(drawn, expected);
  });

  Deno.test(`${t.name} states: each module marks the moves the table says it makes, and no others`, async () => {
    const marked = new Map<string, Set<string>>();
    const mark = new RegExp(`${t.word} moves? ((?:"\\w+"(?:,? and |, )?)+)`, "g");
    for (const file of new Set(Object.values(t.moves).map((m) => m.by))) {
      const text = (await Deno.readTextFile(new URL(file, root))).replace(/\n\s*(\/\/|\*) ?/g, " ");
      const names = [...text.matchAll(mark)]
        .flatMap((m) => [...m[1].matchAll(/"(\w+)"/g)].map((n) => n[1]));
      marked.set(file, new Set(names));
    }
    for (const [name, move] of Object.entries(t.moves)) {
      assert.ok(marked.get(move.by)!.has(name), `${move.by} marks ${t.name} move "${name}"`);
    }
    for (const [file, names] of marked) {
      for (const name of names) assert.equal(t.moves[name]?.by, file, `"${name}" in ${file}`);
    }
  });

  Deno.test(`${t.name} states: every state is reached, and every one but the ends has a way on`, () => {
    const moves = Object.values(t.moves);
    const states = new Set(moves.flatMap((m) => [...m.from, m.to]));
    for (const s of states) {
      assert.ok(moves.some((m) => m.to === s), `${s} is reached`);
      if (!t.ends.includes(s)) assert.ok(moves.some((m) => m.from.includes(s)), `${s} moves on`);
    }
    for (const end of t.ends) assert.ok(states.has(end), `${end} is a state`);
  });
}

/**
 * A write naming a job row, a handed-jobs record, a job count or the signal that free jobs wait,
 * or deleting a prefix of them.
 */
const JOB_WRITE =
  /\.(?:set|sum|delete|max|min)\(\s*keys\.(?:job|handedJob|jobsCreated|jobsSettled|deliverySignal)\(|deleteAll\([^)]*keys\.(?:jobs|handedJobs)\(/;

Deno.test("job states: only kv/outbox/job_moves.ts writes a job row, a handed-jobs record, a count or the signal", async () => {
  const writers = [...await serviceSources()]
    .filter(([path, text]) => path !== "kv/outbox/job_moves.ts" && JOB_WRITE.test(text))
    .map(([path]) => path);
  assert.deepEqual(writers, []);
});
