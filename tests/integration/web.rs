//! The web board in a real browser: `serve` on small tables,
//! Chromium driven through chromedriver (WebDriver), the page's moves and
//! values checked against the JSON API: analysis mode on Kalah(4, 1) with
//! its evaluation graph, the Tables view, then whole games against the
//! engine in play mode, Kalah(4, 3) as South and an oware endgame as North.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs
//! them). Without them the test is skipped with a notice on stderr that
//! says how to install them, unless `MANCALA_TB_REQUIRE_BROWSER=1` (set by
//! `.ci/run`), which makes their absence a failure. With
//! `MANCALA_TB_SCREENSHOT=1` it writes the guide's screenshots of the
//! analysis (`docs/analysis.png`) and of the Tables view
//! (`docs/tables.png`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use mancala_core::{Rules, Variant};
use mancala_gen::{build, BuildOptions, Quiet};
use serde_json::{json, Value as Json};

use crate::Served;

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "chromedriver";
const REQUIRE: &str = "MANCALA_TB_REQUIRE_BROWSER";
const SCREENSHOT: &str = "MANCALA_TB_SCREENSHOT";

/// Longest wait for the page to settle after an action (animations and an
/// analysis each take well under a second on these tables).
const SETTLE: Duration = Duration::from_secs(20);

/// The kalah-4 tables cover Kalah(4, 3), played whole in play mode.
const KALAH_STONES: u32 = 24;

/// The oware endgame played in play mode, within the oware tables (to 8).
const OWARE_ENDGAME: &str = "1,0,2,0,0,1/0,1,0,0,1,0";

/// Longest game played in play mode, in plies, before the test gives up.
const MAX_PLIES: usize = 200;

/// The window's size, and its size for the screenshots: tall enough for
/// the board and its graph.
const WINDOW: (u32, u32) = (1000, 760);
const SCREENSHOT_WINDOW: (u32, u32) = (1000, 1080);

/// A chromedriver process, ended when the test ends however it ends.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether the browser tools are here. Without them the test is skipped
/// with a notice, or fails where they are required.
fn browser_available() -> bool {
    let driver = Command::new(CHROMEDRIVER)
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if driver && Path::new(CHROMIUM).exists() {
        return true;
    }
    let missing = format!(
        "the web-board test needs {CHROMIUM} and {CHROMEDRIVER}: install them with \
         `apt-get install -y chromium chromium-driver` (Debian)"
    );
    if std::env::var(REQUIRE).is_ok_and(|v| v == "1") {
        panic!("{missing}; {REQUIRE}=1 makes their absence a failure");
    }
    // Straight to the file descriptor, past the test harness's capture, so
    // that the skip shows in `cargo test`'s output.
    let _ = writeln!(
        std::io::stderr(),
        "\n*** SKIPPED the_web_board_analyses_and_plays_in_chromium: {missing} ***\n"
    );
    false
}

/// Starts chromedriver on a free port; returns it with its URL.
fn start_driver() -> (Driver, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let child = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    (Driver(child), format!("http://127.0.0.1:{port}"))
}

/// A headless Chromium session, retried while chromedriver comes up.
async fn browser(driver_url: &str) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": CHROMIUM,
            // Reduced motion: the board shows each move's steps without
            // pausing between them (whole games are played here).
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--force-prefers-reduced-motion",
                     format!("--window-size={},{}", WINDOW.0, WINDOW.1)],
        }),
    );
    let started = Instant::now();
    loop {
        // chromedriver is on loopback: plain HTTP, no TLS.
        let connected = ClientBuilder::new(HttpConnector::new())
            .capabilities(caps.clone())
            .connect(driver_url)
            .await;
        match connected {
            Ok(client) => return client,
            Err(e) if started.elapsed() > Duration::from_secs(20) => {
                panic!("no browser session from chromedriver: {e}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// Small tables in a temporary directory, served by the binary; returns the
/// server and the directory (kept alive by the caller).
async fn serve_tables() -> (Served, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let root: PathBuf = dir.path().to_path_buf();
    let built = root.clone();
    tokio::task::spawn_blocking(move || {
        let oware = Rules::new(Variant::Oware, 6).unwrap();
        let kalah = Rules::new(Variant::Kalah, 4).unwrap();
        let mut with_depths = BuildOptions::new(&built, oware, 8);
        with_depths.depths = true;
        build(&with_depths, &Quiet).unwrap();
        build(&BuildOptions::new(&built, kalah, KALAH_STONES), &Quiet).unwrap();
    })
    .await
    .unwrap();
    (Served::start(&root), dir)
}

/// The API's answer to a GET, which must succeed.
async fn api_get(base: &str, path: &str) -> Json {
    let response = reqwest::get(format!("{base}{path}")).await.unwrap();
    assert!(response.status().is_success(), "{path}");
    response.json().await.unwrap()
}

/// The API's answer to a POST, which must succeed.
async fn api(base: &str, path: &str, body: Json) -> Json {
    let response = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success(), "{path} {body}");
    response.json().await.unwrap()
}

fn kalah_request(state: &Json) -> Json {
    json!({"rules": "kalah", "pits": 4, "state": state})
}

/// A game-state request under `rules` (`"kalah"` or `"oware"`).
fn state_request(rules: &str, pits: usize, state: &Json) -> Json {
    json!({"rules": rules, "pits": pits, "state": state})
}

/// Clicks the element `what` finds.
async fn click(client: &Client, what: Locator<'_>) {
    client.find(what).await.unwrap().click().await.unwrap();
}

/// Runs a script in the page and returns its value.
async fn page(client: &Client, script: &str) -> Json {
    client.execute(script, vec![]).await.unwrap()
}

/// Waits until the page shows `state` and is not busy.
async fn settled(client: &Client, state: &Json) {
    let started = Instant::now();
    loop {
        let shown = page(
            client,
            "const b = document.getElementById('board'); \
             return [b.dataset.state, b.dataset.position, b.dataset.toMove];",
        )
        .await;
        if shown == json!(["ready", state["position"], state["to_move"]]) {
            return;
        }
        let banner = page(client, "return document.getElementById('error').hidden ? null : document.getElementById('error-text').textContent;").await;
        assert!(banner.is_null(), "the page shows an error: {banner}");
        assert!(
            started.elapsed() < SETTLE,
            "the page shows {shown}, expected {state}"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Insists that the board shows `state`'s counts and, in analysis mode,
/// the API's value on every legal pit with the best marked.
async fn check_board(client: &Client, base: &str, state: &Json) {
    let analysis = api(base, "/v1/analyze", kalah_request(state)).await;
    let mover = state["to_move"].as_str().unwrap();
    let expected: Vec<Json> = analysis["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let letter = m["move"].as_str().unwrap();
            let pit = letter.as_bytes()[0] - b'a';
            let value = m["value"].as_i64().unwrap();
            let mut text = if value > 0 {
                format!("+{value}")
            } else {
                value.to_string()
            };
            if analysis["best"].as_array().unwrap().contains(&m["move"]) {
                text.push_str(" ★");
            }
            json!([format!("pit-{mover}-{pit}"), text])
        })
        .collect();
    let shown = page(
        client,
        "return [...document.querySelectorAll('.pit.legal')]\
         .map(p => [p.id, p.querySelector('.value').textContent]);",
    )
    .await;
    assert_eq!(shown, Json::Array(expected), "move values of {state}");
    let stores = page(
        client,
        "return ['south', 'north'].map(s => Number(document.getElementById('store-' + s).dataset.count));",
    )
    .await;
    assert_eq!(stores, state["stores"], "stores of {state}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_web_board_analyses_and_plays_in_chromium() {
    if !browser_available() {
        return;
    }
    let (server, _tables) = serve_tables().await;
    let base = server.base.clone();
    let (_driver, driver_url) = start_driver();
    let client = browser(&driver_url).await;
    let session = client.clone();
    let outcome = tokio::spawn(async move {
        drive(&session, &base).await;
        tables_view(&session, &base).await;
        play_kalah(&session, &base).await;
        play_oware_endgame(&session, &base).await;
        fits_a_narrow_screen(&session, &base).await;
    })
    .await;
    // Closed even after a failure, so that no Chromium outlives the test.
    let _ = client.close().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// Kalah(4, 1) in analysis mode: three moves by clicking, the first the
/// worst of the start (so that the evaluation graph steps down) and then
/// the best ones, the graph checked after each; undo and redo, then a bad
/// position's error banner.
async fn drive(client: &Client, base: &str) {
    client.goto(&format!("{base}/")).await.unwrap();
    let reduced = page(
        client,
        "return window.matchMedia('(prefers-reduced-motion: reduce)').matches;",
    )
    .await;
    assert_eq!(reduced, json!(true), "the browser asks for reduced motion");
    client
        .wait()
        .for_element(Locator::Css("#rules option[value='kalah-4']"))
        .await
        .unwrap();
    client
        .find(Locator::Id("rules"))
        .await
        .unwrap()
        .select_by_value("kalah-4")
        .await
        .unwrap();
    let seeds = client.find(Locator::Id("seeds")).await.unwrap();
    seeds.clear().await.unwrap();
    seeds.send_keys("1").await.unwrap();
    click(client, Locator::Id("new-game")).await;

    let mut states = vec![
        json!({"position": "1,1,1,1/1,1,1,1", "to_move": "south", "stores": [0, 0], "history": []}),
    ];
    settled(client, &states[0]).await;
    check_board(client, base, &states[0]).await;
    for ply in 0..3 {
        let state = states.last().unwrap().clone();
        let analysis = api(base, "/v1/analyze", kalah_request(&state)).await;
        let chosen = if ply == 0 {
            worst_move(&analysis)
        } else {
            analysis["best"][0].as_str().unwrap().to_string()
        };
        let pit = chosen.as_bytes()[0] - b'a';
        let mover = state["to_move"].as_str().unwrap();
        click(client, Locator::Id(&format!("pit-{mover}-{pit}"))).await;
        let mut request = kalah_request(&state);
        request["move"] = chosen.into();
        let next = api(base, "/v1/play", request).await["state"].clone();
        settled(client, &next).await;
        check_board(client, base, &next).await;
        states.push(next);
        check_graph(client, base, &states, states.len() - 1).await;
    }
    // South's worst first move is a step down for South.
    let margins = page(
        client,
        "return [...document.querySelectorAll('#graph circle[data-ply]')]\
         .map(c => Number(c.dataset.margin));",
    )
    .await;
    assert!(margins[0].as_i64() > margins[1].as_i64(), "{margins}");
    screenshot(client, "docs/analysis.png").await;

    click(client, Locator::Id("undo")).await;
    settled(client, &states[2]).await;
    check_board(client, base, &states[2]).await;
    // The game played stays on the graph; the marker moves back a ply.
    check_graph(client, base, &states, 2).await;
    click(client, Locator::Id("redo")).await;
    settled(client, &states[3]).await;
    check_graph(client, base, &states, 3).await;

    client
        .find(Locator::Id("position"))
        .await
        .unwrap()
        .send_keys("1,2/3")
        .await
        .unwrap();
    click(client, Locator::Id("new-game")).await;
    let banner = client
        .wait()
        .for_element(Locator::Css("#error:not([hidden])"))
        .await
        .unwrap();
    let text = banner.text().await.unwrap();
    assert!(text.contains("bad position"), "banner: {text}");
    // The game shown before stays on the board.
    let shown = page(
        client,
        "return document.getElementById('board').dataset.position;",
    )
    .await;
    assert_eq!(shown, states[3]["position"]);
}

/// The first of the moves of lowest value in an analysis.
fn worst_move(analysis: &Json) -> String {
    let moves = analysis["moves"].as_array().unwrap();
    let worst = moves
        .iter()
        .min_by_key(|m| m["value"].as_i64().unwrap())
        .unwrap();
    worst["move"].as_str().unwrap().to_string()
}

/// With `MANCALA_TB_SCREENSHOT=1`, writes the page as it is to `file`
/// (relative to the repository) for the guide, in a window tall enough
/// for the board and its graph.
async fn screenshot(client: &Client, file: &str) {
    if !std::env::var(SCREENSHOT).is_ok_and(|v| v == "1") {
        return;
    }
    let (width, height) = SCREENSHOT_WINDOW;
    client.set_window_size(width, height).await.unwrap();
    let png = client.screenshot().await.unwrap();
    client.set_window_size(WINDOW.0, WINDOW.1).await.unwrap();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, png).unwrap();
}

/// South's final margin with perfect play in an analysis of a Kalah(4)
/// game state, and whether it is exact: what the graph must show for it.
async fn south_margin(base: &str, state: &Json) -> (Json, i64, bool) {
    let analysis = api(base, "/v1/analyze", kalah_request(state)).await;
    let margin = analysis["final_margin"].as_i64().unwrap();
    let south = if state["to_move"] == "south" {
        margin
    } else {
        -margin
    };
    (
        analysis.clone(),
        south,
        analysis["exact"].as_bool().unwrap(),
    )
}

/// Insists that the evaluation graph shows a point per state of `states`
/// (ply 0 the start) with South's final margin and its exactness from the
/// API, drawn filled when exact and hollow when not, the marker at
/// `shown`, and the perfect continuation dashed from the last state for as
/// many plies as the API's perfect line, at the last state's margin.
async fn check_graph(client: &Client, base: &str, states: &[Json], shown: usize) {
    let mut expected = Vec::new();
    let mut last = (Json::Null, 0, true);
    for (ply, state) in states.iter().enumerate() {
        last = south_margin(base, state).await;
        expected.push(json!([ply, last.1, last.2]));
    }
    let points = page(
        client,
        "return [...document.querySelectorAll('#graph circle[data-ply]')].map(c => \
         [Number(c.dataset.ply), Number(c.dataset.margin), c.dataset.exact === 'true']);",
    )
    .await;
    assert_eq!(points, Json::Array(expected), "the graph's points");
    let drawn = page(
        client,
        "return [...document.querySelectorAll('#graph circle[data-ply]')].every(c => \
         c.classList.contains(c.dataset.exact === 'true' ? 'exact' : 'estimate'));",
    )
    .await;
    assert_eq!(drawn, json!(true), "exact points filled, estimates hollow");
    let marker = page(
        client,
        "return Number(document.getElementById('graph-marker').dataset.ply);",
    )
    .await;
    assert_eq!(marker, json!(shown), "the marker");
    let (analysis, margin, _) = last;
    let plies = analysis["pv"].as_array().unwrap().len();
    let continuation = if analysis["end"].is_null() && plies > 0 {
        json!([states.len() - 1, plies, margin])
    } else {
        Json::Null
    };
    let perfect = page(
        client,
        "const p = document.getElementById('graph-perfect'); \
         return p && [Number(p.dataset.from), Number(p.dataset.plies), Number(p.dataset.margin)];",
    )
    .await;
    assert_eq!(perfect, continuation, "the perfect continuation");
}

/// The Tables view: for every rule set of `GET /v1/tables`, a point per
/// level on its chart with the shares and mean value of
/// `GET /v1/{rules}/{pits}/levels`, and a row per level; then back to the
/// board, which still shows its game.
async fn tables_view(client: &Client, base: &str) {
    let position = page(
        client,
        "return document.getElementById('board').dataset.position;",
    )
    .await;
    click(client, Locator::Id("view-tables")).await;
    let started = Instant::now();
    while page(
        client,
        "return document.getElementById('tables-list').dataset.state;",
    )
    .await
        != "ready"
    {
        assert!(started.elapsed() < SETTLE, "the Tables view does not load");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let tables = api_get(base, "/v1/tables").await;
    let tables = tables["tables"].as_array().unwrap();
    assert_eq!(tables.len(), 2, "{tables:?}");
    for table in tables {
        let id = table["id"].as_str().unwrap();
        let path = format!(
            "/v1/{}/{}/levels?empty_capture={}",
            table["rules"].as_str().unwrap(),
            table["pits"],
            table["empty_capture"]
        );
        let levels = api_get(base, &path).await;
        let numbers = |level: &Json| -> Vec<f64> {
            ["stones", "won", "drawn", "lost", "mean_value"]
                .iter()
                .map(|k| level[*k].as_f64().unwrap())
                .collect()
        };
        let expected: Vec<Vec<f64>> = levels["levels"]
            .as_array()
            .unwrap()
            .iter()
            .map(numbers)
            .collect();
        let shown = page(
            client,
            &format!(
                "return [...document.querySelectorAll(\"section[data-id='{id}'] circle[data-level]\")] \
                 .map(c => [c.dataset.level, c.dataset.won, c.dataset.drawn, c.dataset.lost, \
                 c.dataset.mean].map(Number));"
            ),
        )
        .await;
        let shown: Vec<Vec<f64>> = serde_json::from_value(shown).unwrap();
        assert_eq!(shown, expected, "{id}: a point per level");
        let rows = page(
            client,
            &format!(
                "return [...document.querySelectorAll(\"section[data-id='{id}'] tr[data-level]\")] \
                 .map(r => Number(r.dataset.level));"
            ),
        )
        .await;
        let stones: Vec<Json> = expected.iter().map(|l| json!(l[0] as u64)).collect();
        assert_eq!(rows, Json::Array(stones), "{id}: a row per level");
    }
    screenshot(client, "docs/tables.png").await;
    click(client, Locator::Id("view-board")).await;
    let back = page(
        client,
        "return [document.getElementById('tables-view').hidden, \
         document.getElementById('board-view').hidden, \
         document.getElementById('board').dataset.position];",
    )
    .await;
    assert_eq!(back, json!([true, false, position]), "back on the board");
}

/// Sets the form and starts a new game: `rules` a table id, `start` seeds
/// per pit or a typed position, `side` the player's side in play mode.
async fn new_game(client: &Client, rules: &str, start: Start<'_>, mode: &str, side: &str) {
    for (select, value) in [("rules", rules), ("mode", mode), ("side", side)] {
        client
            .find(Locator::Id(select))
            .await
            .unwrap()
            .select_by_value(value)
            .await
            .unwrap();
    }
    let (seeds, position) = match start {
        Start::Seeds(n) => (n.to_string(), String::new()),
        Start::Position(p) => ("0".to_string(), p.to_string()),
    };
    for (id, text) in [("seeds", seeds), ("position", position)] {
        let input = client.find(Locator::Id(id)).await.unwrap();
        input.clear().await.unwrap();
        input.send_keys(&text).await.unwrap();
    }
    click(client, Locator::Id("new-game")).await;
}

/// How a new game starts: seeds in every pit, or a typed position.
#[derive(Clone, Copy)]
enum Start<'a> {
    Seeds(u32),
    Position(&'a str),
}

/// Kalah(4, 3) against the engine, the player South.
async fn play_kalah(client: &Client, base: &str) {
    new_game(client, "kalah-4", Start::Seeds(3), "play", "south").await;
    let start =
        json!({"position": "3,3,3,3/3,3,3,3", "to_move": "south", "stores": [0, 0], "history": []});
    play_to_the_end(client, base, "kalah", 4, start, "south").await;
}

/// An oware endgame within the tables against the engine, the player
/// North: the engine, South, moves first.
async fn play_oware_endgame(client: &Client, base: &str) {
    new_game(
        client,
        "oware-6",
        Start::Position(OWARE_ENDGAME),
        "play",
        "north",
    )
    .await;
    let start =
        json!({"position": OWARE_ENDGAME, "to_move": "south", "stores": [0, 0], "history": []});
    play_to_the_end(client, base, "oware", 6, start, "north").await;
}

/// At a phone's width (420 px) a whole 6-pit board fits the window, and
/// the perfect line wraps instead of widening the page.
async fn fits_a_narrow_screen(client: &Client, base: &str) {
    client.set_window_size(420, 900).await.unwrap();
    client.goto(&format!("{base}/")).await.unwrap();
    client
        .wait()
        .for_element(Locator::Css("#rules option[value='oware-6']"))
        .await
        .unwrap();
    new_game(
        client,
        "oware-6",
        Start::Position(OWARE_ENDGAME),
        "analyse",
        "south",
    )
    .await;
    let start =
        json!({"position": OWARE_ENDGAME, "to_move": "south", "stores": [0, 0], "history": []});
    settled(client, &start).await;
    // The oware tables have depth tables: the summary says when the value
    // is realized.
    let analysis = api(base, "/v1/analyze", state_request("oware", 6, &start)).await;
    let plies = analysis["depth"].as_u64().expect("a depth in the analysis");
    let summary = page(
        client,
        "return document.getElementById('summary').textContent;",
    )
    .await;
    let unit = if plies == 1 { "ply" } else { "plies" };
    assert!(
        summary
            .as_str()
            .unwrap()
            .contains(&format!(", converts in {plies} {unit} (")),
        "{summary}"
    );
    let fits = page(
        client,
        "const w = document.documentElement.clientWidth; \
         const board = document.getElementById('board').getBoundingClientRect(); \
         const pits = [...document.querySelectorAll('.pit, .store')] \
             .every(p => p.getBoundingClientRect().right <= w + 1); \
         return [board.right <= w + 1, pits, document.documentElement.scrollWidth <= w + 1];",
    )
    .await;
    assert_eq!(
        fits,
        json!([true, true, true]),
        "the board does not fit 420 px"
    );
}

/// Plays the game shown from `start` to its end in play mode: the player
/// clicks the first legal pit on each turn, the engine must answer with the
/// API's first best move. The same game is replayed through
/// `POST /v1/play`; the page must show each state where the player moves,
/// then the end with the replay's final stores and winner.
async fn play_to_the_end(
    client: &Client,
    base: &str,
    rules: &str,
    pits: usize,
    start: Json,
    human: &str,
) {
    let mut state = start;
    let mut end = Json::Null;
    for _ in 0..MAX_PLIES {
        let mover = state["to_move"].as_str().unwrap().to_string();
        let move_ = if mover == human {
            settled(client, &state).await;
            check_sides(client, &state, human).await;
            let pit = page(
                client,
                "const p = document.querySelector('.pit.legal'); return p && Number(p.dataset.pit);",
            )
            .await;
            let pit = pit
                .as_u64()
                .unwrap_or_else(|| panic!("no legal pit shown in {state}"));
            click(client, Locator::Id(&format!("pit-{human}-{pit}"))).await;
            char::from(b'a' + pit as u8).to_string()
        } else {
            let analysis = api(base, "/v1/analyze", state_request(rules, pits, &state)).await;
            analysis["best"][0].as_str().unwrap().to_string()
        };
        let mut request = state_request(rules, pits, &state);
        request["move"] = move_.into();
        let played = api(base, "/v1/play", request).await;
        state = played["state"].clone();
        if !played["end"].is_null() {
            end = played["end"].clone();
            break;
        }
    }
    assert!(!end.is_null(), "{rules}: no end within {MAX_PLIES} plies");
    settled(client, &state).await;
    let [south, north] = [&end["stores"][0], &end["stores"][1]];
    let result = match end["winner"].as_str() {
        Some(winner) => format!("{winner} wins"),
        None => "a draw".to_string(),
    };
    let expected = format!(
        "Game over ({}): south {south}, north {north}: {result}.",
        end["reason"].as_str().unwrap()
    );
    let shown = page(
        client,
        "return document.getElementById('status').textContent;",
    )
    .await;
    assert_eq!(shown, json!(expected), "{rules}: the end shown");
    let stores = page(
        client,
        "return ['south', 'north'].map(s => Number(document.getElementById('store-' + s).dataset.count));",
    )
    .await;
    assert_eq!(stores, state["stores"], "{rules}: stores at the end");
    let marked = page(
        client,
        "return document.querySelectorAll('.pit.legal, .pit.mover, .row-name.mover').length;",
    )
    .await;
    assert_eq!(marked, json!(0), "{rules}: no side to move after the end");
}

/// On the player's turn, only the player's row is marked as moving and
/// named as the player's.
async fn check_sides(client: &Client, state: &Json, human: &str) {
    let shown = page(
        client,
        "return [[...document.querySelectorAll('.pit.mover, .pit.legal')]\
         .every(p => p.dataset.side === document.getElementById('board').dataset.toMove), \
         [...document.querySelectorAll('.row-name.mover')].map(n => n.textContent)];",
    )
    .await;
    assert_eq!(
        shown,
        json!([true, [format!("{human} (you) to move")]]),
        "sides marked in {state}"
    );
}
