/** How often the page asks for the locks again, in ms (counted from the end of the last refresh). */
const REFRESH_EVERY = 2000;
/** The most locks the page shows: past them it says that more are held, and the prefix narrows the view. */
const MAX_SHOWN = 1000;
/** How many locks the page asks for per request: the JSON API's default page. */
const PAGE_LIMIT = 100;
/** The most requests of one refresh: a Redis page may be short, even empty, while more keys follow. */
const MAX_REQUESTS = 20;

/** `text` safe inside HTML text and double-quoted attributes. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/**
 * The Content-Security-Policy of the page: its own inline script and style, requests to its own origin only.
 * Nothing is loaded from elsewhere (no CDN: many production networks reach none).
 */
export const ADMIN_PAGE_POLICY =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The operator's page: a table of held locks refreshed by polling its JSON API, the hold and wait times per key
 * template, and a force-release button when the module allows it. No build step; every value from the server
 * is put in the page as text (`textContent`), never as HTML. The API is found beside the page's own URL
 * (`<page>/api`), so a global prefix or a proxy that mounts the application under a path changes nothing.
 */
export function adminPage(forceRelease: boolean): string {
  const settings = escapeHtml(
    JSON.stringify({
      forceRelease,
      refreshEvery: REFRESH_EVERY,
      maxShown: MAX_SHOWN,
      pageLimit: PAGE_LIMIT,
      maxRequests: MAX_REQUESTS,
    }),
  );
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Locks</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1.5rem; color: #222; }
h1 { font-size: 1.3rem; } h2 { font-size: 1.05rem; margin-top: 2rem; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid #ddd; vertical-align: top; }
th { background: #f4f4f4; } code { font-size: 13px; } .muted { color: #777; } .error { color: #b00; }
button { cursor: pointer; }
</style>
</head>
<body data-settings="${settings}">
<h1>Locks</h1>
<p><label>Prefix <input id="prefix" size="30"></label> <span id="status" class="muted"></span></p>
<p id="more" hidden></p>
<table>
<thead><tr><th>Key</th><th>Kind</th><th>Holders</th><th>Waiters</th><th>Fence</th><th></th></tr></thead>
<tbody id="locks"></tbody>
</table>
<h2>Hold and wait times per key template</h2>
<table>
<thead><tr><th>Key template</th><th>Acquired</th><th>Hold avg / max (ms)</th><th>Wait avg / max (ms)</th></tr></thead>
<tbody id="stats"></tbody>
</table>
<script>
(() => {
  const settings = JSON.parse(document.body.dataset.settings);
  // beside the page's own URL, whatever prefix or proxy path put it there
  const api = location.pathname.replace(/\\/+$/, '') + '/api';
  const cell = (row, text) => { const td = row.insertCell(); td.textContent = text === undefined ? '' : String(text); return td; };
  const holderText = (holder) => [
    holder.label || '(no label)',
    holder.host && holder.pid !== undefined ? holder.host + ':' + holder.pid : '',
    holder.mode || '',
    holder.remainingTtl !== undefined ? holder.remainingTtl + ' ms left' : '',
    holder.fence !== undefined ? 'fence ' + holder.fence : '',
  ].filter(Boolean).join(', ');
  const status = document.getElementById('status');
  async function release(key) {
    if (!confirm('Force-release ' + key + '? Its holders lose it and their fenced writes are refused.')) return;
    const response = await fetch(api + '/locks/' + encodeURIComponent(key) + '/release', { method: 'POST', headers: { 'x-lock-admin': 'release' } });
    status.textContent = response.ok ? 'released ' + key : 'release refused (' + response.status + ')';
    refresh();
  }
  function showLocks(locks) {
    const body = document.getElementById('locks');
    body.replaceChildren();
    if (locks.length === 0) { const row = body.insertRow(); cell(row, 'No lock is held.').colSpan = 6; return; }
    for (const lock of locks) {
      const row = body.insertRow();
      row.dataset.key = lock.key;
      cell(row, lock.key).className = 'key';
      cell(row, lock.kind + (lock.limit !== undefined ? ' (limit ' + lock.limit + ')' : '') + (lock.mode ? ' (' + lock.mode + ')' : ''));
      const holders = cell(row, '');
      for (const holder of lock.holders) { const line = document.createElement('div'); line.textContent = holderText(holder); holders.append(line); }
      cell(row, lock.waiters);
      cell(row, lock.fence);
      const actions = cell(row, '');
      if (settings.forceRelease) {
        const button = document.createElement('button');
        button.textContent = 'Force release';
        button.addEventListener('click', () => release(lock.key));
        actions.append(button);
      }
    }
  }
  function showStats(stats) {
    const body = document.getElementById('stats');
    body.replaceChildren();
    for (const entry of stats) {
      const row = body.insertRow();
      cell(row, entry.keyTemplate);
      cell(row, entry.acquired);
      cell(row, entry.holdAverage + ' / ' + entry.holdMax);
      cell(row, entry.waitAverage + ' / ' + entry.waitMax);
    }
  }
  // the held locks page after page, up to maxShown of them; whether the store has more to list
  async function readLocks(prefix) {
    const locks = [];
    let cursor;
    for (let requests = 0; requests < settings.maxRequests && locks.length < settings.maxShown; requests++) {
      const query = new URLSearchParams({ limit: String(Math.min(settings.pageLimit, settings.maxShown - locks.length)) });
      if (prefix) query.set('prefix', prefix);
      if (cursor) query.set('cursor', cursor);
      const response = await fetch(api + '/locks?' + query);
      if (!response.ok) throw new Error('HTTP ' + response.status);
      const page = await response.json();
      locks.push(...page.locks);
      cursor = page.cursor;
      if (!cursor) break;
    }
    return { locks, more: cursor !== undefined };
  }
  function showMore(shown, more) {
    const notice = document.getElementById('more');
    notice.hidden = !more;
    notice.textContent = more ? 'Showing ' + shown + ' locks; more may be held than this page shows. Narrow the view with the prefix.' : '';
  }
  async function refresh() {
    try {
      const [{ locks, more }, stats] = await Promise.all([readLocks(document.getElementById('prefix').value), fetch(api + '/stats')]);
      if (!stats.ok) throw new Error('HTTP ' + stats.status);
      showLocks(locks);
      showMore(locks.length, more);
      showStats((await stats.json()).templates);
      document.body.dataset.updated = String(Date.now());
    } catch (error) {
      status.textContent = 'cannot read the locks: ' + error.message;
      status.className = 'error';
    }
  }
  // the next refresh once this one is done: a slow store never piles up requests
  (async function poll() {
    await refresh();
    setTimeout(poll, settings.refreshEvery);
  })();
})();
</script>
</body>
</html>
`;
}
