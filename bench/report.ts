/** The table the bench prints: one row per measured figure, against its target. */

export interface Row {
  scenario: string;
  /** The measured figure, already formatted (req/s, deliveries/s, ms). */
  value: string;
  baseline: string;
  ratio: string;
  target: string;
  pass: boolean | null;
  /** CPU time per operation of the service and of its baseline: steadier than rates here. */
  cpu?: string;
}

/** A rate (operations per second) and the CPU time each operation cost its process. */
export interface Measured {
  rate: number;
  /** Microseconds, all threads of the process; NaN when it could not be read. */
  cpuUs: number;
}

const us = (v: number) => Number.isFinite(v) ? v.toFixed(0) : "?";

/** A row comparing a rate to its baseline's rate: passes at `minRatio` or above. */
export function ratioRow(
  scenario: string,
  service: Measured,
  base: Measured,
  minRatio: number,
): Row {
  const ratio = service.rate / base.rate;
  return {
    cpu: `${us(service.cpuUs)} / ${us(base.cpuUs)} us`,
    scenario,
    value: service.rate.toFixed(0),
    baseline: base.rate.toFixed(0),
    ratio: `${(ratio * 100).toFixed(0)}%`,
    target: `>= ${(minRatio * 100).toFixed(0)}%`,
    pass: ratio >= minRatio,
  };
}

/** A row comparing CPU per operation to its baseline's: passes at `maxRatio` or below. */
export function cpuRow(scenario: string, service: Measured, base: Measured, maxRatio: number): Row {
  const ratio = service.cpuUs / base.cpuUs;
  return {
    scenario,
    value: `${us(service.cpuUs)} us`,
    baseline: `${us(base.cpuUs)} us`,
    ratio: Number.isFinite(ratio) ? `${ratio.toFixed(2)}x` : "?",
    target: `<= ${maxRatio.toFixed(1)}x`,
    pass: Number.isFinite(ratio) ? ratio <= maxRatio : null,
  };
}

/** A row with no target: a figure shown for context. */
export function infoRow(scenario: string, value: string, baseline = "", ratio = ""): Row {
  return { scenario, value, baseline, ratio, target: "(info)", pass: null };
}

export function printTable(rows: Row[]): void {
  const header = [
    "scenario",
    "value",
    "baseline",
    "ratio",
    "target",
    "result",
    "cpu/op svc / base",
  ];
  const cells = rows.map((r) => [
    r.scenario,
    r.value,
    r.baseline,
    r.ratio,
    r.target,
    r.pass === null ? "" : r.pass ? "PASS" : "FAIL",
    r.cpu ?? "",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) => c.map((v, i) => v.padEnd(widths[i])).join(" | ").trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
  for (const c of cells) console.log(line(c));
}

/** A row for a figure that must stay under `limit` (latencies). */
export function limitRow(scenario: string, value: number, limit: number, unit: string): Row {
  return {
    scenario,
    value: `${value.toFixed(1)} ${unit}`,
    baseline: "",
    ratio: "",
    target: `< ${limit} ${unit}`,
    pass: value < limit,
  };
}
