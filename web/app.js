// The web board of `mancala-tb serve`. It knows no rules: legal moves and
// values come from POST /v1/analyze, moves (with their sowing path and
// captures) from POST /v1/play. Sides are "south" (bottom row, moves
// first) and "north" (top row); a pit is counted along its own side's row.
"use strict";

const SIDES = ["south", "north"];
const LETTERS = "abcdefghijklmnopqrstuvwxyz";
const $ = (id) => document.getElementById(id);

const app = {
  tables: [],
  table: null,   // the chosen entry of GET /v1/tables
  mode: "analyse",
  human: "south",
  games: [],     // every state reached: {state, analysis}, oldest first
  index: -1,     // the state shown
};

// ---- server -------------------------------------------------------------

async function request(url, body) {
  const options = body === undefined ? {} : {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  };
  const response = await fetch(url, options);
  let answer;
  try {
    answer = await response.json();
  } catch (e) {
    throw new Error(`${url}: HTTP ${response.status}, not JSON`);
  }
  if (!response.ok) {
    throw new Error(answer.error || `${url}: HTTP ${response.status}`);
  }
  return answer;
}

function ruleFields(table) {
  return { rules: table.rules, pits: table.pits, empty_capture: table.empty_capture };
}

function analyze(table, state) {
  return request("/v1/analyze", { ...ruleFields(table), state });
}

function play(table, state, move) {
  return request("/v1/play", { ...ruleFields(table), state, move });
}

// ---- error banner and status -------------------------------------------

function showError(error) {
  $("error-text").textContent = error.message || String(error);
  $("error").hidden = false;
}

function clearError() {
  $("error").hidden = true;
}

function setBusy(busy, text) {
  $("board").dataset.state = busy ? "busy" : "ready";
  $("status").textContent = text || "";
}

// Runs an action, showing its failure in the banner; the board stays usable.
async function guarded(action) {
  clearError();
  try {
    await action();
  } catch (error) {
    showError(error);
    setBusy(false, "");
    if (current()) render(current());
  }
}

// ---- the board ----------------------------------------------------------

// The counts of each side's row, from a position seen by `toMove`.
function sidesOf(state) {
  const rows = state.position.split("/").map((row) => row.split(",").map(Number));
  const other = state.to_move === "south" ? "north" : "south";
  return { [state.to_move]: rows[0], [other]: rows[1] };
}

function pitId(side, pit) {
  return `pit-${side}-${pit}`;
}

function place(element, row, column) {
  element.style.gridRow = row;
  element.style.gridColumn = column;
  return element;
}

function buildBoard(pits) {
  const board = $("board");
  board.replaceChildren();
  board.style.gridTemplateColumns = `repeat(${pits + 2}, auto)`;
  for (const side of SIDES) {
    const south = side === "south";
    const name = document.createElement("div");
    name.className = "row-name";
    name.id = `name-${side}`;
    board.append(place(name, south ? 4 : 1, `2 / ${pits + 2}`));
    const store = document.createElement("div");
    store.className = "store";
    store.id = `store-${side}`;
    board.append(place(store, "2 / span 2", south ? pits + 2 : 1));
    for (let i = 0; i < pits; i++) {
      const pit = document.createElement("button");
      pit.type = "button";
      pit.className = "pit";
      pit.id = pitId(side, i);
      pit.dataset.side = side;
      pit.dataset.pit = i;
      pit.addEventListener("click", () => onPit(side, i));
      board.append(place(pit, south ? 3 : 2, south ? i + 2 : pits + 1 - i));
    }
  }
}

function drawStones(element, count, label) {
  const stones = document.createElement("div");
  stones.className = "stones";
  for (let i = 0; i < Math.min(count, 24); i++) {
    const stone = document.createElement("span");
    stone.className = "stone";
    stones.append(stone);
  }
  const number = document.createElement("span");
  number.className = "count";
  number.textContent = count;
  element.dataset.count = count;
  const parts = [number, stones];
  if (label) {
    const name = document.createElement("span");
    name.className = "label";
    name.textContent = label;
    parts.push(name);
  }
  element.replaceChildren(...parts);
}

function setPit(side, pit, count) {
  drawStones($(pitId(side, pit)), count, LETTERS[pit]);
}

function setStore(side, count) {
  drawStones($(`store-${side}`), count, side);
}

function drawCounts(sides, stores) {
  SIDES.forEach((side, s) => {
    sides[side].forEach((count, i) => setPit(side, i, count));
    setStore(side, stores[s]);
  });
}

function clearMarks() {
  for (const pit of document.querySelectorAll(".pit")) {
    pit.classList.remove("mover", "legal", "sown", "captured", "origin");
  }
}

// ---- showing a state ----------------------------------------------------

function current() {
  return app.games[app.index];
}

function render({ state, analysis }) {
  const { pits } = app.table;
  // What is shown, for scripts and tests driving the page.
  $("board").dataset.position = state.position;
  $("board").dataset.toMove = state.to_move;
  drawCounts(sidesOf(state), state.stores);
  clearMarks();
  const legal = new Map(analysis.moves.map((m) => [m.move, m]));
  const over = Boolean(analysis.end);
  const myTurn = app.mode === "analyse" || state.to_move === app.human;
  for (let i = 0; i < pits; i++) {
    const pit = $(pitId(state.to_move, i));
    if (!over) pit.classList.add("mover");
    const move = legal.get(LETTERS[i]);
    if (move && myTurn && !over) pit.classList.add("legal");
    if (move && app.mode === "analyse") addValue(pit, move, analysis.best);
  }
  for (const side of SIDES) {
    const moving = side === state.to_move && !over;
    const you = app.mode === "play" && side === app.human ? " (you)" : "";
    $(`name-${side}`).textContent = `${side}${you}${moving ? " to move" : ""}`;
    $(`name-${side}`).classList.toggle("mover", moving);
  }
  renderAnalysis(state, analysis);
  $("status").textContent = over ? endText(analysis.end) : "";
  $("undo").disabled = stepTarget(-1) === null;
  $("redo").disabled = stepTarget(1) === null;
}

function signed(value) {
  return value > 0 ? `+${value}` : String(value);
}

function addValue(pit, move, best) {
  const value = document.createElement("span");
  value.className = "value";
  value.textContent = (move.exact ? "" : "≈") + signed(move.value);
  if (best.includes(move.move)) {
    value.classList.add("best");
    value.textContent += " ★";
  }
  pit.append(value);
}

function renderAnalysis(state, analysis) {
  const shown = app.mode === "analyse";
  $("analysis").hidden = !shown;
  if (!shown) return;
  const how = analysis.exact ? `exact, from ${analysis.source}` : "estimate";
  $("summary").textContent =
    `${state.to_move} to move: value ${signed(analysis.value)} (${how}), ` +
    `final margin ${signed(analysis.final_margin)}: a ${analysis.outcome}. ` +
    `Best: ${analysis.best.join(", ") || "none"}.`;
  const plies = analysis.pv.map((move, i) => {
    const ply = document.createElement("span");
    ply.className = "ply";
    ply.textContent = `${analysis.pv_sides[i][0].toUpperCase()}:${move}`;
    return ply;
  });
  const end = document.createElement("span");
  end.textContent = `(${analysis.pv_end})`;
  $("pv").replaceChildren(...plies, end);
}

function endText(end) {
  const [south, north] = end.stores;
  const result = end.winner ? `${end.winner} wins` : "a draw";
  return `Game over (${end.reason}): south ${south}, north ${north}: ${result}.`;
}

// ---- moves --------------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Shows a move stone by stone: the pit emptied, each stone dropped along
// the path, then the captured pits flashed and emptied into the store.
async function animate(before, answer) {
  const sides = sidesOf(before);
  const stores = [...before.stores];
  const mover = answer.mover;
  const { pit, path, captured } = answer.sowing;
  const step = Math.min(180, 2000 / Math.max(path.length, 1));
  clearMarks();
  $(pitId(mover, pit)).classList.add("origin");
  sides[mover][pit] = 0;
  drawCounts(sides, stores);
  for (const spot of path) {
    await sleep(step);
    if (spot.store) {
      stores[SIDES.indexOf(spot.side)] += 1;
    } else {
      sides[spot.side][spot.pit] += 1;
      $(pitId(spot.side, spot.pit)).classList.add("sown");
    }
    drawCounts(sides, stores);
  }
  if (captured.length === 0) return;
  for (const spot of captured) $(pitId(spot.side, spot.pit)).classList.add("captured");
  await sleep(600);
  for (const spot of captured) {
    sides[spot.side][spot.pit] = 0;
    stores[SIDES.indexOf(mover)] += spot.stones;
  }
  drawCounts(sides, stores);
  await sleep(300);
}

// Plays `move` in the state shown: animation, then the new state analysed.
async function makeMove(move) {
  const before = current().state;
  setBusy(true, "…");
  const answer = await play(app.table, before, move);
  await animate(before, answer);
  setBusy(true, "thinking…");
  const analysis = await analyze(app.table, answer.state);
  app.games.splice(app.index + 1, Infinity, { state: answer.state, analysis });
  app.index += 1;
  render(current());
  setBusy(false, $("status").textContent);
}

// In play mode, the engine answers while it is to move.
async function engineTurns() {
  while (app.mode === "play" && !current().analysis.end &&
         current().state.to_move !== app.human) {
    await makeMove(current().analysis.best[0]);
  }
}

function onPit(side, pit) {
  const shown = current();
  if (!shown || $("board").dataset.state === "busy") return;
  if (!$(pitId(side, pit)).classList.contains("legal")) return;
  guarded(async () => {
    await makeMove(LETTERS[pit]);
    await engineTurns();
  });
}

// Undo and redo step one state in analysis mode; in play mode they skip
// the engine's turns, stopping only where the player moves or the game ends.
function stepTarget(direction) {
  const stop = ({ state, analysis }) =>
    app.mode === "analyse" || analysis.end || state.to_move === app.human;
  for (let index = app.index + direction;
       index >= 0 && index < app.games.length; index += direction) {
    if (stop(app.games[index])) return index;
  }
  return null;
}

function stepTo(direction) {
  if ($("board").dataset.state === "busy") return;
  const index = stepTarget(direction);
  if (index === null) return;
  app.index = index;
  clearError();
  render(current());
}

// ---- a new game ---------------------------------------------------------

function startPosition(pits) {
  const typed = $("position").value.trim();
  if (typed) return typed;
  const seeds = Number($("seeds").value);
  if (!Number.isInteger(seeds) || seeds < 0) {
    throw new Error(`seeds per pit must be a whole number, got '${$("seeds").value}'`);
  }
  const row = Array(pits).fill(seeds).join(",");
  return `${row}/${row}`;
}

// Starts the game the form describes; the game shown so far stays if the
// server rejects the new one.
async function newGame() {
  const table = app.tables.find((t) => t.id === $("rules").value);
  if (!table) throw new Error("no rule set chosen: the server has no tables");
  const position = startPosition(table.pits);
  const state = { position, to_move: "south", stores: [0, 0], history: [] };
  setBusy(true, "thinking…");
  const analysis = await analyze(table, state);
  app.table = table;
  app.mode = $("mode").value;
  app.human = $("side").value;
  buildBoard(table.pits);
  app.games = [{ state, analysis }];
  app.index = 0;
  render(current());
  setBusy(false, $("status").textContent);
  await engineTurns();
}

async function loadTables() {
  const { tables } = await request("/v1/tables");
  app.tables = tables;
  const select = $("rules");
  select.replaceChildren(...tables.map((t) => {
    const option = document.createElement("option");
    option.value = t.id;
    option.textContent = `${t.rules}, ${t.pits} pits (tables to ${t.max_level} stones)`;
    return option;
  }));
  if (tables.length === 0) throw new Error("the server has no tables: build some with `mancala-tb build`");
}

function init() {
  $("setup").addEventListener("submit", (event) => {
    event.preventDefault();
    guarded(newGame);
  });
  $("error-close").addEventListener("click", clearError);
  $("undo").addEventListener("click", () => stepTo(-1));
  $("redo").addEventListener("click", () => stepTo(1));
  guarded(async () => {
    await loadTables();
    await newGame();
  });
}

init();
