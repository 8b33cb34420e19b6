/** "Q3 Plans!" and "#Q3 plans" both slug to "q3-plans". */
export function slugify(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
}

/** The name as stored: surrounding space and one leading `#` removed. */
export function cleanChannelName(name: string): string {
  return name.trim().replace(/^#/, "").trim();
}
