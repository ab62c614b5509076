// The web board of `mancala-tb serve`. It knows no rules: legal moves and
// values come from POST /v1/analyze, moves (with their sowing path and
// captures) from POST /v1/play. Sides are "south" (bottom row, moves
// first) and "north" (top row); a pit is counted along its own side's row.
// The evaluation graph under the board and the Tables view are inline SVG
// drawn here, from those answers and GET /v1/{rules}/{pits}/levels.
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
  renderGraph();
  $("status").textContent = over ? endText(analysis.end) : "";
  $("undo").disabled = stepTarget(-1) === null;
  $("redo").disabled = stepTarget(1) === null;
}

function signed(value) {
  return value > 0 ? `+${value}` : String(value);
}

// "converts in 7 plies" where depth tables give one, else "".
function converts(depth) {
  if (typeof depth !== "number") return "";
  return `converts in ${depth} ${depth === 1 ? "ply" : "plies"}`;
}

function addValue(pit, move, best) {
  const value = document.createElement("span");
  value.className = "value";
  value.textContent = (move.exact ? "" : "≈") + signed(move.value);
  if (converts(move.depth)) value.title = converts(move.depth);
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
  const conversion = converts(analysis.depth) ? `, ${converts(analysis.depth)}` : "";
  $("summary").textContent =
    `${state.to_move} to move: value ${signed(analysis.value)}${conversion} (${how}), ` +
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

// ---- inline SVG ---------------------------------------------------------

const SVG_NS = "http://www.w3.org/2000/svg";

// An SVG element with `attributes`, and `text` as its content if given.
function svg(name, attributes = {}, text) {
  const element = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

// A linear map from [from0, from1] onto [to0, to1].
function scale(from0, from1, to0, to1) {
  return (v) => to0 + ((v - from0) / (from1 - from0)) * (to1 - to0);
}

// ---- the evaluation graph -----------------------------------------------

// The graph's size and margins, in the units of its viewBox.
const GRAPH = { width: 640, height: 150, left: 40, right: 12, top: 8, bottom: 24 };

// The final margin South reaches with perfect play from a game's state:
// its stores so far and the exact value of the board, which the analysis
// gives for the player to move. It stays level while both sides play
// perfectly and steps against the side that errs.
function southMargin({ state, analysis }) {
  return state.to_move === "south" ? analysis.final_margin : -analysis.final_margin;
}

// Redraws the graph: a point per state of the game (ply 0 is the start),
// exact ones filled and estimates hollow, the perfect continuation from the
// last state dashed, and the marker at the state shown.
function renderGraph() {
  const points = app.games.map((game, ply) => ({
    ply,
    margin: southMargin(game),
    exact: game.analysis.exact,
    toMove: game.state.to_move,
  }));
  const last = points[points.length - 1];
  const lastAnalysis = app.games[last.ply].analysis;
  const continuation = lastAnalysis.end ? 0 : lastAnalysis.pv.length;
  const plies = Math.max(1, last.ply + continuation);
  const bound = Math.max(1, ...points.map((p) => Math.abs(p.margin)));
  const g = GRAPH;
  const x = scale(0, plies, g.left, g.width - g.right);
  // A little room above and below the largest margin, so no point sits on
  // the frame.
  const y = scale(-1.15 * bound, 1.15 * bound, g.height - g.bottom, g.top);
  const parts = graphAxes(x, y, plies, bound);
  const line = points.map((p) => `${x(p.ply)},${y(p.margin)}`).join(" ");
  parts.push(svg("polyline", { class: "played", points: line }));
  if (continuation > 0) {
    parts.push(svg("line", {
      class: "perfect", id: "graph-perfect",
      "data-from": last.ply, "data-plies": continuation, "data-margin": last.margin,
      x1: x(last.ply), y1: y(last.margin), x2: x(plies), y2: y(last.margin),
    }));
  }
  parts.push(svg("line", {
    class: "marker", id: "graph-marker", "data-ply": app.index,
    x1: x(app.index), y1: y(1.15 * bound), x2: x(app.index), y2: y(-1.15 * bound),
  }));
  for (const p of points) parts.push(graphPoint(p, x, y));
  $("graph").replaceChildren(...parts);
}

// The zero line, the margins at the top and bottom, and the plies.
function graphAxes(x, y, plies, bound) {
  const g = GRAPH;
  const label = (text, at, attributes) => svg("text", { class: "axis", ...at, ...attributes }, text);
  return [
    svg("line", { class: "zero", x1: g.left, y1: y(0), x2: g.width - g.right, y2: y(0) }),
    label(signed(bound), { x: g.left - 6, y: y(bound) }, { "text-anchor": "end", dy: "0.35em" }),
    label("0", { x: g.left - 6, y: y(0) }, { "text-anchor": "end", dy: "0.35em" }),
    label(signed(-bound), { x: g.left - 6, y: y(-bound) }, { "text-anchor": "end", dy: "0.35em" }),
    label("ply 0", { x: x(0), y: g.height - 6 }, { "text-anchor": "start" }),
    label(`ply ${plies}`, { x: x(plies), y: g.height - 6 }, { "text-anchor": "end" }),
  ];
}

// One state's point, with its numbers as data attributes and a tooltip.
function graphPoint(p, x, y) {
  const shown = p.ply === app.index;
  const circle = svg("circle", {
    class: `point ${p.exact ? "exact" : "estimate"}${shown ? " current" : ""}`,
    cx: x(p.ply), cy: y(p.margin), r: shown ? 5.5 : 4,
    "data-ply": p.ply, "data-margin": p.margin, "data-exact": p.exact,
  });
  const how = p.exact ? "exact" : "estimate";
  circle.append(svg("title", {},
    `ply ${p.ply}, ${p.toMove} to move: South's final margin ${signed(p.margin)} (${how})`));
  return circle;
}

// ---- moves --------------------------------------------------------------

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A user whose system asks for less motion sees each move's steps without
// the pauses between them.
const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");
const pause = (ms) => sleep(reducedMotion.matches ? 0 : ms);

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
    await pause(step);
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
  await pause(600);
  for (const spot of captured) {
    sides[spot.side][spot.pit] = 0;
    stores[SIDES.indexOf(mover)] += spot.stones;
  }
  drawCounts(sides, stores);
  await pause(300);
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

// ---- the Tables view ----------------------------------------------------

// The chart's size and margins, in the units of its viewBox.
const LEVELS_CHART = { width: 640, height: 240, left: 44, right: 44, top: 12, bottom: 30 };

// Shows the board or the Tables view; the Tables view is read afresh each
// time, so that tables built since show.
function setView(view) {
  $("board-view").hidden = view !== "board";
  $("tables-view").hidden = view !== "tables";
  $("view-board").setAttribute("aria-pressed", String(view === "board"));
  $("view-tables").setAttribute("aria-pressed", String(view === "tables"));
  if (view === "tables") guarded(loadTablesView);
}

async function loadTablesView() {
  const list = $("tables-list");
  list.dataset.state = "busy";
  const { tables } = await request("/v1/tables");
  const sections = [];
  for (const table of tables) {
    const query = `empty_capture=${table.empty_capture}`;
    const { levels } = await request(`/v1/${table.rules}/${table.pits}/levels?${query}`);
    sections.push(tableSet(table, levels));
  }
  if (sections.length === 0) {
    sections.push(Object.assign(document.createElement("p"), {
      textContent: "The server has no tables: build some with `mancala-tb build`.",
    }));
  }
  list.replaceChildren(...sections);
  list.dataset.state = "ready";
}

// One rule set: its title, the chart of its levels and the table of them.
function tableSet(table, levels) {
  const section = document.createElement("section");
  section.className = "table-set";
  section.dataset.id = table.id;
  const title = document.createElement("h2");
  const rules = table.empty_capture ? table.rules : `${table.rules} (no empty-pit capture)`;
  title.textContent = `${rules}, ${table.pits} pits: levels 0 to ${table.max_level}`;
  const key = document.createElement("p");
  key.className = "key";
  key.innerHTML = '<span class="key-won">■</span> won <span class="key-drawn">■</span> drawn ' +
    '<span class="key-lost">■</span> lost for the player to move, ' +
    '<span class="key-mean">●</span> mean value in stones (right axis)';
  section.append(title, levelsChart(levels), key, levelsTable(levels));
  return section;
}

// The stacked shares of each level and the line of their mean values.
function levelsChart(levels) {
  const c = LEVELS_CHART;
  const chart = svg("svg", {
    class: "levels-chart", viewBox: `0 0 ${c.width} ${c.height}`, role: "img",
    "aria-label": "shares won, drawn and lost and the mean value per level",
  });
  const slot = (c.width - c.left - c.right) / levels.length;
  const share = scale(0, 1, c.height - c.bottom, c.top);
  const means = levels.map((l) => l.mean_value);
  const low = Math.min(0, ...means);
  const high = Math.max(0, ...means);
  const room = Math.max(0.5, (high - low) * 0.1);
  const mean = scale(low - room, high + room, c.height - c.bottom, c.top);
  const center = (i) => c.left + (i + 0.5) * slot;
  const parts = levelsAxes(levels, share, mean, [low, high], center);
  levels.forEach((level, i) => {
    let bottom = 0;
    for (const part of ["won", "drawn", "lost"]) {
      const top = bottom + level[part];
      parts.push(svg("rect", {
        class: `bar ${part}`, x: center(i) - 0.4 * slot, width: 0.8 * slot,
        y: share(top), height: share(bottom) - share(top),
      }));
      bottom = top;
    }
  });
  const line = levels.map((l, i) => `${center(i)},${mean(l.mean_value)}`).join(" ");
  parts.push(svg("polyline", { class: "mean", points: line }));
  levels.forEach((level, i) => parts.push(levelPoint(level, center(i), mean(level.mean_value))));
  chart.append(...parts);
  return chart;
}

// The share axis on the left, the mean-value axis on the right (0 and the
// extreme means), and the levels along the bottom (every one, or every few
// when there are many).
function levelsAxes(levels, share, mean, [low, high], center) {
  const c = LEVELS_CHART;
  const text = (content, attributes) => svg("text", { class: "axis", dy: "0.35em", ...attributes }, content);
  const parts = [];
  for (const s of [0, 0.5, 1]) {
    parts.push(text(`${100 * s}%`, { x: c.left - 6, y: share(s), "text-anchor": "end" }));
  }
  const apart = (v) => v === 0 || Math.abs(v) > 0.1 * (high - low);
  for (const v of new Set([low, 0, high])) {
    if (!apart(v)) continue;
    parts.push(text(v.toFixed(1), { x: c.width - c.right + 6, y: mean(v), "text-anchor": "start" }));
  }
  const every = Math.ceil(levels.length / 24);
  levels.forEach((level, i) => {
    if (i % every === 0) {
      parts.push(text(String(level.stones), { x: center(i), y: c.height - c.bottom + 12, "text-anchor": "middle" }));
    }
  });
  parts.push(text("stones on the board", { x: c.width / 2, y: c.height - 4, "text-anchor": "middle" }));
  return parts;
}

// One level's point on the mean line, with its numbers as data attributes.
function levelPoint(level, cx, cy) {
  const point = svg("circle", {
    class: "level-point", cx, cy, r: 3.5,
    "data-level": level.stones, "data-won": level.won, "data-drawn": level.drawn,
    "data-lost": level.lost, "data-mean": level.mean_value,
  });
  const percent = (s) => `${(100 * s).toFixed(1)}%`;
  point.append(svg("title", {},
    `${level.stones} stones: won ${percent(level.won)}, drawn ${percent(level.drawn)}, ` +
    `lost ${percent(level.lost)}, mean value ${signed(Number(level.mean_value.toFixed(2)))}`));
  return point;
}

// The levels as rows: sizes and shares.
function levelsTable(levels) {
  const table = document.createElement("table");
  table.className = "levels";
  const head = ["stones", "positions", "bytes", "bits/position", "won", "drawn", "lost", "mean value"];
  const row = (cells, tag) => {
    const tr = document.createElement("tr");
    tr.append(...cells.map((text) => Object.assign(document.createElement(tag), { textContent: text })));
    return tr;
  };
  const percent = (s) => `${(100 * s).toFixed(1)}%`;
  table.append(row(head, "th"));
  for (const l of levels) {
    const tr = row([
      String(l.stones), l.positions.toLocaleString("en"), l.bytes.toLocaleString("en"),
      l.bits_per_position.toFixed(3), percent(l.won), percent(l.drawn), percent(l.lost),
      l.mean_value.toFixed(3),
    ], "td");
    tr.dataset.level = l.stones;
    table.append(tr);
  }
  return table;
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
  $("view-board").addEventListener("click", () => setView("board"));
  $("view-tables").addEventListener("click", () => setView("tables"));
  guarded(async () => {
    await loadTables();
    await newGame();
  });
}

init();
