/** GET / until the chat page arrives: what the gateway serves. */
export function homePage(version: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>askbus</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}code{background:#f2f2f2;padding:0 .25rem}</style>
</head>
<body>
<h1>askbus</h1>
<p>A natural-language endpoint for this site's schema.org data, speaking NLWeb's <code>/ask</code> protocol. Gateway ${escapeHtml(version)}.</p>
<ul>
<li><code>GET|POST /ask?query=…&amp;site=…</code>: the answer as server-sent events (<code>streaming=false</code> for one JSON body); a POST body <code>{"query":{"text":…},"prefer":{…},"meta":{"version":"0.55"}}</code> answers with v0.55 named events</li>
<li><code>GET /sites</code>: the sites that can be asked</li>
<li><code>GET /health</code>, <code>GET /ready</code>: liveness and readiness</li>
</ul>
<p>Try <a href="/ask?query=spicy+snacks&amp;streaming=false">/ask?query=spicy snacks&amp;streaming=false</a>.</p>
</body>
</html>
`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
