/* Bot Arena report: the searchable list of games and the replay viewer it opens.
 * Reads the data embedded in the page (#report-data); loads nothing. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var games = data.games;
  var byId = {};
  games.forEach(function (g) { byId[g.id] = g; });
  var LIMIT = 200; // rows shown at once; the search narrows the rest
  var table = document.querySelector("#game-table tbody");
  var search = document.getElementById("game-search");
  var count = document.getElementById("game-count");
  var viewer = document.getElementById("viewer");
  var current = null;

  function text(g) {
    return [g.id, "round " + g.round, g.players.join(" "), g.result, g.termination, g.reason]
      .join(" ").toLowerCase();
  }
  var haystack = games.map(text);

  function cell(row, value, cls) {
    var td = document.createElement("td");
    td.textContent = value;
    if (cls) td.className = cls;
    row.appendChild(td);
  }

  function list() {
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0, matched = 0;
    var body = document.createDocumentFragment();
    for (var i = 0; i < games.length; i++) {
      var hay = haystack[i];
      if (!words.every(function (w) { return hay.indexOf(w) >= 0; })) continue;
      matched++;
      if (shown >= LIMIT) continue;
      shown++;
      var g = games[i];
      var tr = document.createElement("tr");
      tr.dataset.game = g.id;
      if (g.id === current) tr.className = "current";
      cell(tr, g.id);
      cell(tr, g.round);
      cell(tr, g.players.join(" vs "), "players");
      cell(tr, g.result);
      cell(tr, g.termination, "l");
      cell(tr, g.moves.length);
      body.appendChild(tr);
    }
    table.replaceChildren(body);
    count.textContent = matched === games.length
      ? games.length + " games" + (shown < matched ? ", the first " + shown + " listed: search to find the others" : "")
      : matched + " of " + games.length + " games match" + (shown < matched ? ", the first " + shown + " listed" : "");
  }

  /* The viewer wants one object a move; the page stores the info as columns. */
  function rows(info, n) {
    var out = [];
    var forced = {};
    (info.forced || []).forEach(function (p) { forced[p] = true; });
    for (var i = 0; i < n; i++) {
      var o = { seat: info.seat[i], ms: info.ms[i] };
      ["value", "depth", "nodes"].forEach(function (k) {
        if (info[k] && info[k][i] !== null && info[k][i] !== undefined) o[k] = info[k][i];
      });
      if (info.pv && info.pv[i]) o.pv = info.pv[i].split(" ");
      if (forced[i]) o.forced = true;
      out.push(o);
    }
    return out;
  }

  function open(id, focus) {
    var g = byId[id];
    if (!g) return;
    current = g.id;
    Array.prototype.forEach.call(table.querySelectorAll("tr"), function (tr) {
      tr.className = Number(tr.dataset.game) === g.id ? "current" : "";
    });
    viewer.replaceChildren();
    viewer.dataset.game = g.id;
    var head = document.createElement("h3");
    head.textContent = "Game " + g.id + ": " + g.players.join(" vs ") + ", " + g.result +
      " (" + g.termination + (g.reason ? ": " + g.reason : "") + ")";
    viewer.appendChild(head);
    if (g.opening) {
      var op = document.createElement("p");
      op.className = "note";
      op.textContent = "opening: " + g.opening;
      viewer.appendChild(op);
    }
    var host = document.createElement("div");
    host.className = "replay-host";
    viewer.appendChild(host);
    if (g.board) {
      window.ArenaReplay.mount(host, {
        board: g.board, moves: g.moves, info: rows(g.info, g.moves.length),
        players: g.players, result: g.result
      });
    } else {
      host.textContent = "This game's board cannot be drawn here (its rules are not installed): " +
        g.moves.join(" ");
    }
    if (focus) viewer.focus();
  }

  table.addEventListener("click", function (ev) {
    var tr = ev.target.closest("tr");
    if (tr && tr.dataset.game) {
      history.replaceState(null, "", "#game-" + tr.dataset.game);
      open(Number(tr.dataset.game), true);
    }
  });
  search.addEventListener("input", list);

  function fromHash() {
    var m = /^#game-(\d+)$/.exec(location.hash);
    if (m && byId[Number(m[1])]) {
      open(Number(m[1]), false);
      document.getElementById("games").scrollIntoView();
    }
  }
  window.addEventListener("hashchange", fromHash);
  list();
  if (games.length) open(games[0].id, false);
  fromHash();
  window.ArenaReport = { open: open, data: data };
})();
