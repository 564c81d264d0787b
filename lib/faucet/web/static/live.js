// Live updates for coin-faucetd's pages. The pages work without this script: it only
// listens to the API's event stream (Server-Sent Events, lib/faucet/events) and, on any
// event, reads the page's values again from the same API the page was rendered from. When
// the stream is missing (404) or fails, it says so in the footer and does nothing else.
(function () {
  'use strict';
  var body = document.body;
  var live = document.getElementById('live');
  if (!body || !live) { return; }
  var eventsURL = body.getAttribute('data-events');
  var source = body.getAttribute('data-source');
  if (!eventsURL || typeof window.EventSource !== 'function') {
    return;
  }

  function say(text) {
    if (live.textContent !== text) { live.textContent = text; }
  }

  function coin(s) {
    s = String(s);
    if (s.indexOf('.') >= 0) { s = s.replace(/0+$/, '').replace(/\.$/, ''); }
    return s;
  }

  var formats = {
    coin: coin,
    yesno: function (v) { return v ? 'yes' : 'no'; },
    confirmed: function (v) { return v ? '(confirmed)' : '(pending: in the mempool)'; },
    avg: function (v) { return v === null || v === undefined ? 'no review yet' : Number(v).toFixed(1) + ' of 10'; }
  };

  // show writes the fields of an API answer into the elements that show them.
  function show(data) {
    var els = document.querySelectorAll('[data-live] [data-field], [data-live][data-field]');
    for (var i = 0; i < els.length; i++) {
      var el = els[i];
      var field = el.getAttribute('data-field');
      var fmt = el.getAttribute('data-format');
      if (!Object.prototype.hasOwnProperty.call(data, field) && fmt !== 'avg') { continue; }
      var v = data[field];
      var text;
      if (fmt === 'tier' || fmt === 'status') {
        text = String(v);
        el.className = fmt + ' ' + fmt + '-' + text.replace(/[^a-z]/g, '');
      } else if (formats[fmt]) {
        text = formats[fmt](v);
      } else {
        text = String(v);
      }
      if (el.textContent !== text) { el.textContent = text; }
    }
  }

  var timer = null;
  var busy = false;
  function refresh() {
    timer = null;
    if (!source || busy || typeof window.fetch !== 'function') { return; }
    if (!document.querySelector('[data-live]')) {
      say('Live updates: on. There is new data since this page was loaded: reload the page to see it.');
      return;
    }
    busy = true;
    window.fetch(source, { headers: { Accept: 'application/json' }, credentials: 'same-origin' })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) {
        busy = false;
        if (data) {
          show(data);
          say('Live updates: on (updated ' + new Date().toLocaleTimeString() + ').');
        }
      }, function () { busy = false; });
  }

  var activity = document.getElementById('activity');
  var activityList = document.getElementById('activity-list');

  // describe is one line of text for an event of lib/faucet/events.
  function describe(type, d) {
    var short = function (a) { return a ? String(a).slice(0, 14) + '…' : '?'; };
    switch (type) {
      case 'agent_registered': return 'registered';
      case 'vouched': return short(d.actor) + ' vouched for ' + short(d.target);
      case 'contract_created': return 'contract ' + short(d.contract_id) + ' created (' + coin(d.value_coin || '') + ' COIN)';
      case 'contract_fulfilled': return 'contract ' + short(d.contract_id) + ' fulfilled';
      case 'contract_refunded': return 'contract ' + short(d.contract_id) + ' refunded';
      case 'reviewed': return short(d.actor) + ' reviewed ' + short(d.subject) + ': ' + d.score + ' of 10';
      case 'score_changed': return 'score ' + d.old_score + ' → ' + d.new_score + (d.tier ? ' (' + d.tier + ')' : '');
      case 'retracted': return 'undone: ' + String(d.retracted_type || '').replace(/_/g, ' ') + ' (' + (d.reason || '') + ')';
    }
    return String(type).replace(/_/g, ' ');
  }

  function onEvent(e) {
    if (activity && activityList && typeof e.data === 'string') {
      var d = {};
      try { d = JSON.parse(e.data) || {}; } catch (err) { d = {}; }
      var li = document.createElement('li');
      li.textContent = new Date().toLocaleTimeString() + ': ' + describe(e.type, d) + (d.status === 'pending' ? ' (pending)' : '');
      activityList.insertBefore(li, activityList.firstChild);
      while (activityList.children.length > 20) { activityList.removeChild(activityList.lastChild); }
      activity.hidden = false;
    }
    if (timer === null) { timer = window.setTimeout(refresh, 300); }
  }

  var es;
  try {
    es = new window.EventSource(eventsURL);
  } catch (err) {
    return;
  }
  say('Live updates: connecting…');
  es.onopen = function () { say('Live updates: on.'); };
  es.onerror = function () {
    if (es.readyState === window.EventSource.CLOSED) {
      es.close();
      say('Live updates: not available on this server (reload the page for new data).');
    } else {
      say('Live updates: reconnecting…');
    }
  };
  es.onmessage = onEvent;
  // The event types of lib/faucet/events (each is an SSE event name).
  var names = ['agent_registered', 'vouched', 'contract_created', 'contract_fulfilled', 'contract_refunded',
    'reviewed', 'score_changed', 'retracted', 'gap'];
  for (var n = 0; n < names.length; n++) { es.addEventListener(names[n], onEvent); }
}());
