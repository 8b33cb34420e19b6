/**
 * The screen's stylesheet and its one script, served as files so the Content-Security-Policy
 * can forbid inline code. The page works without the script; it adds copy buttons, asks before
 * what can't be undone, and keeps a reload from sending a form again.
 */
export const STYLESHEET = `
:root { color-scheme: light dark; --fg: #1d1c1d; --muted: #616061; --line: #ddd; --accent: #1264a3;
  --bad: #b3261e; --ok: #1e7b34; --bg: #fff; --card: #f8f8f8; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8e8e8; --muted: #a0a0a0; --line: #444;
  --accent: #4ea3e8; --bad: #ff8a80; --ok: #7bd88f; --bg: #1a1d21; --card: #222529; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); }
main { max-width: 64rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .75rem; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
header.top { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center;
  justify-content: space-between; padding: .5rem 1rem; border-bottom: 1px solid var(--line); }
header.top ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0;
  padding: 0; }
header.top a { text-decoration: none; padding: .25rem 0; }
header.top a[aria-current="page"] { font-weight: 600; border-bottom: 2px solid var(--accent); }
.sign-out span { color: var(--muted); }
.table-wrap { overflow-x: auto; position: relative; }
table { border-collapse: collapse; width: 100%; font-size: .95rem; }
th, td { text-align: left; vertical-align: top; padding: .5rem; border-bottom: 1px solid var(--line); }
thead th { font-size: .85rem; color: var(--muted); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.url, dd.url, td code { overflow-wrap: anywhere; }
time { white-space: nowrap; }
td.actions { white-space: nowrap; }
ul.scopes { list-style: none; margin: 0; padding: 0; font-size: .85rem; }
.muted { color: var(--muted); }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .85em; }
form.inline { display: inline; }
button { font: inherit; padding: .35rem .8rem; border: 1px solid var(--line); border-radius: 6px;
  background: var(--card); color: var(--fg); cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { color: var(--bad); }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 1rem;
  max-width: 36rem; }
.field { margin-bottom: 1rem; }
.field label, legend { display: block; font-weight: 600; margin-bottom: .25rem; }
input[type="text"], select, input.secret { font: inherit; width: 100%; padding: .4rem .5rem;
  border: 1px solid var(--line); border-radius: 6px; background: var(--bg); color: var(--fg); }
input[aria-invalid="true"], select[aria-invalid="true"] { border-color: var(--bad); }
fieldset { border: 0; padding: 0; margin: 0 0 1rem; }
.checks { display: grid; grid-template-columns: repeat(auto-fill, minmax(13rem, 1fr)); gap: .25rem; }
.checks label { font-weight: normal; }
.scope-grid { display: grid; grid-template-columns: max-content max-content max-content;
  gap: .25rem 1.5rem; }
.scope-row { display: contents; }
.scope-row label { font-weight: normal; white-space: nowrap; }
.scope-row .resource { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.field-error, .form-error { color: var(--bad); margin: .25rem 0 0; }
.hint { color: var(--muted); margin: 0 0 .25rem; font-size: .9rem; }
.notice { border-left: 4px solid var(--ok); padding: .5rem .75rem; background: var(--card); }
.warning { border-left: 4px solid var(--bad); padding: .5rem .75rem; background: var(--card); }
.reach ul { margin: .25rem 0 0; }
.revealed { border: 2px solid var(--accent); border-radius: 8px; padding: .75rem 1rem; margin: 1rem 0; }
.revealed h2 { margin: 0 0 .25rem; }
.revealed-note { margin: .5rem 0 0; }
.copy { display: flex; gap: .5rem; }
.copy input { font-family: ui-monospace, monospace; }
.target { display: block; }
code.id { font-size: .75rem; }
td.actions form.inline + form.inline { margin-left: .5rem; }
.badge { display: inline-block; padding: 0 .5rem; border-radius: 999px; font-size: .85rem;
  border: 1px solid currentColor; }
.badge.ok { color: var(--ok); }
.badge.bad { color: var(--bad); }
tr.bad td:nth-child(4) { color: var(--bad); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; }
.button-row { display: flex; flex-wrap: wrap; gap: .5rem; margin: 1rem 0; }
.pager { display: flex; gap: 1rem; margin: 1rem 0; }
details summary { cursor: pointer; margin: .5rem 0; color: var(--accent); }
pre { overflow: auto; max-height: 28rem; padding: .5rem; border: 1px solid var(--line);
  font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .8rem; }
section.bot { border-top: 1px solid var(--line); }
ul.channel-list { list-style: none; margin: 0 0 .75rem; padding: 0; display: flex; flex-wrap: wrap;
  gap: .5rem; }
ul.channel-list li { display: flex; align-items: center; gap: .5rem; padding: .15rem .2rem .15rem .75rem;
  border: 1px solid var(--line); border-radius: 999px; }
ul.channel-list button { padding: .1rem .6rem; border-radius: 999px; font-size: .85rem; }
form.add-to-channel { display: flex; flex-wrap: wrap; align-items: flex-end; gap: .5rem;
  margin-bottom: 1rem; }
form.add-to-channel .field { margin: 0; flex: 0 1 20rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden;
  clip-path: inset(50%); white-space: nowrap; }
header.top .narrow { display: none; }
details.menu summary { margin: 0; padding: .25rem 0; font-weight: 600; }
details.menu .here { font-weight: normal; color: var(--muted); margin-left: .5rem; }
details.menu .here::before { content: "· "; }
details.menu { position: relative; }
details.menu > nav { position: absolute; top: 100%; left: 0; z-index: 1; min-width: 15rem;
  margin-top: .5rem; padding: .5rem 1rem; background: var(--bg); border: 1px solid var(--line);
  border-radius: 8px; box-shadow: 0 4px 12px rgb(0 0 0 / .15); }
header.top details.menu ul { flex-direction: column; }
@media (max-width: 40rem) {
  header.top .wide { display: none; }
  header.top .narrow { display: block; }
  header.top { flex-wrap: nowrap; }
  .sign-out span { display: none; }
  main { padding: .75rem; }
  .table-wrap table, .table-wrap tbody, .table-wrap tr, .table-wrap th, .table-wrap td {
    display: block; }
  .table-wrap thead { position: absolute; width: 1px; height: 1px; overflow: hidden;
    clip-path: inset(50%); }
  .table-wrap tr { border-bottom: 1px solid var(--line); padding: .5rem 0; }
  .table-wrap th, .table-wrap td { border: 0; padding: .15rem 0; }
  .table-wrap td[data-label]::before { content: attr(data-label) ": "; color: var(--muted);
    font-size: .85rem; }
  td.num { text-align: left; }
  td.actions { padding-top: .4rem; }
  ul.scopes li { display: inline; }
  ul.scopes li + li::before { content: ", "; }
}
`;

export const SCRIPT = `
const canonical = document.body.dataset.canonical;
if (canonical) history.replaceState(null, "", canonical);
for (const button of document.querySelectorAll("button[data-confirm]")) {
  button.form.addEventListener("submit", (event) => {
    if (!confirm(button.dataset.confirm)) event.preventDefault();
  });
}
for (const button of document.querySelectorAll("button[data-copy]")) {
  const field = document.getElementById(button.dataset.copy);
  if (!field || !navigator.clipboard) continue;
  button.hidden = false;
  button.addEventListener("click", async () => {
    await navigator.clipboard.writeText(field.value);
    button.textContent = "Copied";
  });
}
`;
