/* A ladder's page of arena serve: its standings followed by server-sent events (each change
 * of the standings as it happens), or polled from the JSON API when the stream is refused
 * (too many streams: 503/429) or the browser has no EventSource; the table rebuilt from text
 * nodes (names and owners are strangers' text, never markup). A poll sends the ETag of the
 * standings shown (If-None-Match): while they hold, the server answers 304 with no body. */
(function () {
  "use strict";
  var POLL_MS = 2000;
  var table = document.getElementById("standings");
  if (!table) return;
  var url = table.getAttribute("data-url");
  var events = table.getAttribute("data-events");
  var me = table.getAttribute("data-me");
  var body = table.tBodies[0];
  var mine = document.getElementById("my-bots");

  function rounded(x) {
    return x === null ? "-" : String(Math.round(x));
  }

  function cell(row, text, cls) {
    var td = document.createElement("td");
    td.textContent = String(text);
    if (cls) td.className = cls;
    row.appendChild(td);
    return td;
  }

  function show(view) {
    document.getElementById("games").textContent = String(view.games);
    document.getElementById("in-play").textContent = String(view.in_play);
    var rows = document.createDocumentFragment();
    var own = document.createDocumentFragment();
    view.standings.forEach(function (s) {
      var tr = document.createElement("tr");
      tr.setAttribute("data-bot", s.name);
      if (me && s.owner === me) {
        tr.className = "mine";
        var li = document.createElement("li");
        li.textContent = s.name;
        own.appendChild(li);
      }
      cell(tr, s.rank);
      cell(tr, s.settled ? s.best : s.best + "-" + s.worst);
      var name = cell(tr, "");
      if (typeof s.bot === "number") {
        var a = document.createElement("a");
        a.href = "/bots/" + s.bot;
        a.textContent = s.name;
        name.appendChild(a);
      } else {
        name.textContent = s.name;
      }
      cell(tr, s.owner === null ? "(house)" : s.owner);
      cell(tr, rounded(s.elo), "elo");
      cell(tr, s.low === null ? "-" : rounded(s.low) + ".." + rounded(s.high));
      cell(tr, s.games, "games");
      cell(tr, s.in_play);
      cell(tr, s.status);
      rows.appendChild(tr);
    });
    body.replaceChildren(rows);
    if (mine) mine.replaceChildren(own);
    refreshed();
  }

  var etag = null; // the tag of the standings shown: the server answers 304 while it holds

  function refreshed() {
    document.getElementById("refreshed").textContent =
      "refreshed " + new Date().toLocaleTimeString();
  }

  function poll() {
    var headers = etag ? { "If-None-Match": etag } : {};
    fetch(url, { credentials: "same-origin", cache: "no-store", headers: headers })
      .then(function (r) {
        if (r.status === 304) { refreshed(); return null; } // the table shown is current
        if (!r.ok) return null;
        var tag = r.headers.get("ETag");
        return r.json().then(function (view) { etag = tag; return view; });
      })
      .then(function (view) { if (view) show(view); })
      .catch(function () { /* the next poll tries again */ })
      .then(function () { setTimeout(poll, POLL_MS); });
  }
  function follow() {
    var source = new EventSource(events);
    source.addEventListener("standings", function (e) {
      var view = null;
      try { view = JSON.parse(e.data); } catch (err) { return; }
      show(view);
    });
    source.onerror = function () {
      // a cut stream reconnects by itself; a refused one is closed for good: poll instead
      if (source.readyState === EventSource.CLOSED) setTimeout(poll, POLL_MS);
    };
  }

  if (events && window.EventSource) follow();
  else setTimeout(poll, POLL_MS);
})();
