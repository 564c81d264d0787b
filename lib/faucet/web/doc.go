// Package web is coin-faucetd's Web page: the faucet's claim form, the network status, the
// faucet's balance and recent payouts, the Proof of Conduct agent directory, an agent's
// profile and a contract, as server-rendered HTML for people with a browser.
//
// # Overview
//
// [New] puts the pages in front of the faucet's HTTP API. The pages are a door of the
// faucet's service (lib/faucet/api.Service): every datum is a call of the Service method the
// API's endpoint calls (Status, Directory, Profile, Contract; the claim form's POST is Claim),
// with lib/faucet/api's types. So a page shows exactly what the API answers the same client
// at the same moment, with the same limits: each call is for the browser's client (its address
// and X-Forwarded-For, [Options].Caller) and spends its request budget first
// (Service.Admit), and a claim through the form counts against the address's cooldown, the
// client's hourly claims and the faucet's budget exactly as a claim through the API. The one
// datum the API does not serve, the faucet's recent payouts, comes from [Options].Payouts
// (the faucet's journal of payouts not yet final).
//
// Paths: GET / for a browser (Accept: text/html; any other client gets the API's JSON index
// there, with Vary: Accept), POST /claim (the form; a cross-origin POST is refused), GET
// /agents (?offset=&limit= as the API's directory; ?address= redirects to the profile),
// /agents/{address}, /contracts (?id= redirects), /contracts/{id}, and /static/ (the style
// sheet, the script and the icon, embedded). Every other path goes to the API unchanged.
//
// The HTML is html/template (contextual auto-escaping; nothing a user or the node wrote is
// ever trusted as HTML) and works without JavaScript: forms are plain GET and POST. Pages are
// served with a Content-Security-Policy that allows no inline script or style: the one script,
// static/live.js, is a file. It listens to the event stream GET /api/agent/events
// (Server-Sent Events) and, on any event, re-reads the values of the page from the API; when
// the stream is missing (404) or fails it says so in the footer and does nothing else.
// Static files carry a content hash in their URL (?v=) and are cached for a year under that
// URL; pages are not cached.
//
// Accessibility: a lang attribute, landmarks (banner, navigation, main, contentinfo), a
// skip link, a label on every input, captions and header cells on tables, visible focus,
// text contrast of at least 4.5:1, and tiers and statuses written as words (their colour only
// repeats the word). The layout is one column on a phone (viewport meta, fluid widths,
// tables scroll inside their own region).
//
// # Errors
//
// An API error becomes a page with the API's status, code and message (and its Retry-After);
// a payout list that cannot be read is said on the page, never a failure of the page.
package web
