//! The web board in a real browser: `serve` in-process on small tables,
//! Chromium driven through chromedriver (WebDriver), the page's moves and
//! values checked against the JSON API.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs
//! them); without them the test fails and says how to install them, unless
//! `MANCALA_TB_SKIP_BROWSER=1`. With `MANCALA_TB_SCREENSHOT=1` it writes the
//! analysis screenshot of the README to `docs/analysis.png`.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use mancala_tb::build::{build, BuildOptions, Quiet};
use mancala_tb::{Rules, Variant};
use serde_json::{json, Value as Json};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "chromedriver";
const SKIP: &str = "MANCALA_TB_SKIP_BROWSER";
const SCREENSHOT: &str = "MANCALA_TB_SCREENSHOT";

/// Longest wait for the page to settle after an action (animations and an
/// analysis each take well under a second on these tables).
const SETTLE: Duration = Duration::from_secs(20);

/// A chromedriver process, ended when the test ends however it ends.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether the browser tools are here; without them the test fails with
/// the install command, unless skipping was asked for.
fn browser_available() -> bool {
    let driver = Command::new(CHROMEDRIVER)
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if driver && Path::new(CHROMIUM).exists() {
        return true;
    }
    if std::env::var(SKIP).is_ok_and(|v| v == "1") {
        eprintln!("skipped: {SKIP}=1 and no {CHROMIUM} or {CHROMEDRIVER}");
        return false;
    }
    panic!(
        "the web-board test needs {CHROMIUM} and {CHROMEDRIVER}: install them with \
         `apt-get install -y chromium chromium-driver` (Debian), or set {SKIP}=1 to skip it"
    );
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
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update",
                     "--disable-sync", "--window-size=1000,760"],
        }),
    );
    let started = Instant::now();
    loop {
        let connected = ClientBuilder::rustls()
            .expect("rustls connector")
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

/// Small tables in a temporary directory, served in-process; returns the
/// base URL and the directory (kept alive by the caller).
async fn serve_tables() -> (String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let root: PathBuf = dir.path().to_path_buf();
    let built = root.clone();
    tokio::task::spawn_blocking(move || {
        let oware = Rules::new(Variant::Oware, 6).unwrap();
        let kalah = Rules::new(Variant::Kalah, 4).unwrap();
        build(&BuildOptions::new(&built, oware, 8), &Quiet).unwrap();
        build(&BuildOptions::new(&built, kalah, 12), &Quiet).unwrap();
    })
    .await
    .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(mancala_tb::server::serve(listener, root));
    (base, dir)
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
        tokio::time::sleep(Duration::from_millis(100)).await;
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
async fn the_web_board_plays_and_analyses_kalah_in_chromium() {
    if !browser_available() {
        return;
    }
    let (base, _tables) = serve_tables().await;
    let (_driver, driver_url) = start_driver();
    let client = browser(&driver_url).await;
    let session = client.clone();
    let outcome = tokio::spawn(async move { drive(&session, &base).await }).await;
    // Closed even after a failure, so that no Chromium outlives the test.
    let _ = client.close().await;
    if let Err(e) = outcome {
        std::panic::resume_unwind(e.into_panic());
    }
}

/// Kalah(4, 1) in analysis mode: the best move three times by clicking,
/// undo and redo, then a bad position's error banner.
async fn drive(client: &Client, base: &str) {
    client.goto(&format!("{base}/")).await.unwrap();
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
    client
        .find(Locator::Id("new-game"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();

    let mut states = vec![
        json!({"position": "1,1,1,1/1,1,1,1", "to_move": "south", "stores": [0, 0], "history": []}),
    ];
    settled(client, &states[0]).await;
    check_board(client, base, &states[0]).await;
    for _ in 0..3 {
        let state = states.last().unwrap().clone();
        let analysis = api(base, "/v1/analyze", kalah_request(&state)).await;
        let best = analysis["best"][0].as_str().unwrap();
        let pit = best.as_bytes()[0] - b'a';
        let mover = state["to_move"].as_str().unwrap();
        client
            .find(Locator::Id(&format!("pit-{mover}-{pit}")))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let mut request = kalah_request(&state);
        request["move"] = best.into();
        let next = api(base, "/v1/play", request).await["state"].clone();
        settled(client, &next).await;
        check_board(client, base, &next).await;
        states.push(next);
    }
    if std::env::var(SCREENSHOT).is_ok_and(|v| v == "1") {
        let png = client.screenshot().await.unwrap();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/analysis.png");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, png).unwrap();
    }

    client
        .find(Locator::Id("undo"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    settled(client, &states[2]).await;
    check_board(client, base, &states[2]).await;
    client
        .find(Locator::Id("redo"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    settled(client, &states[3]).await;

    client
        .find(Locator::Id("position"))
        .await
        .unwrap()
        .send_keys("1,2/3")
        .await
        .unwrap();
    client
        .find(Locator::Id("new-game"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
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
