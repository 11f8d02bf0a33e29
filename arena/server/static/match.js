/* The game page of arena serve: the report's replay viewer (replay.js) mounted on the game
 * the page carries as JSON data (never evaluated; its text goes in as text nodes). */
(function () {
  "use strict";
  var node = document.getElementById("game-data");
  var host = document.getElementById("replay");
  if (!node || !host) return;
  var g = JSON.parse(node.textContent);
  if (!g.board) return;
  window.ArenaReplay.mount(host, {
    board: g.board, moves: g.moves, info: g.info, players: g.players, result: g.result
  });
})();
