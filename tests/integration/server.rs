//! `mancala-tb serve` over real HTTP: every endpoint against the library's
//! own answers, malformed input and its status codes, a game state, the
//! binary's startup line, and a load check with concurrent clients.
//!
//! The throughput of the load check is printed:
//! `cargo test --release --test integration -- --nocapture load`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use mancala_core::{Cycles, LevelIndex, MoveValue, Position, Rules, Variant};
use mancala_format::{level_file_name, tables_dir};
use mancala_gen::{build, BuildOptions, Quiet};
use mancala_probe::Tablebase;
use reqwest::blocking::{Client, Response};
use reqwest::StatusCode;
use serde_json::{json, Value as Json};

use crate::Served;

/// Most positions in one batch (`docs/guide/http.md`).
const MAX_BATCH: usize = 10_000;
/// Largest request body, in bytes.
const MAX_BODY: usize = 1 << 20;

const OWARE_MAX: u32 = 8;
const KALAH_MAX: u32 = 12;
/// The forced oware tables, for the levels endpoint.
const FORCED_MAX: u32 = 5;

/// Tables and a server on them, shared by every test of this file.
struct Fixture {
    root: PathBuf,
    base: String,
    oware: Tablebase,
    kalah: Tablebase,
    /// The server, alive as long as the test process.
    _server: Served,
}

fn oware() -> Rules {
    Rules::new(Variant::Oware, 6).unwrap()
}

fn kalah() -> Rules {
    Rules::new(Variant::Kalah, 4).unwrap()
}

/// Builds the tables (once; a rerun reuses the valid files) under the
/// target's scratch directory and serves them with the binary on a free
/// port.
fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("server-tables");
        build(&BuildOptions::new(&root, oware(), OWARE_MAX), &Quiet).unwrap();
        build(&BuildOptions::new(&root, kalah(), KALAH_MAX), &Quiet).unwrap();
        let mut forced = BuildOptions::new(&root, oware(), FORCED_MAX);
        forced.cycles = Cycles::Forced;
        build(&forced, &Quiet).unwrap();
        let server = Served::start(&root);
        Fixture {
            oware: Tablebase::open(&root, oware()).unwrap(),
            kalah: Tablebase::open(&root, kalah()).unwrap(),
            root,
            base: server.base.clone(),
            _server: server,
        }
    })
}

fn get(path: &str) -> Response {
    Client::new()
        .get(format!("{}{path}", fixture().base))
        .send()
        .unwrap()
}

fn post(body: impl Into<reqwest::blocking::Body>) -> Response {
    Client::new()
        .post(format!("{}/v1/analyze", fixture().base))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .unwrap()
}

/// The status and JSON body of a response.
fn answer(response: Response) -> (StatusCode, Json) {
    let status = response.status();
    let text = response.text().unwrap();
    let json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    (status, json)
}

/// Insists on an error answer of this status and kind.
fn assert_error(response: Response, status: StatusCode, kind: &str) -> String {
    let (got, body) = answer(response);
    assert_eq!((got, body["kind"].as_str()), (status, Some(kind)), "{body}");
    body["error"]
        .as_str()
        .expect("an error message")
        .to_string()
}

/// What the server must answer for `pos`, from the library.
fn expected(tb: &Tablebase, pos: &Position) -> Json {
    let value = tb.value(pos).unwrap();
    let moves = tb.move_values(pos).unwrap();
    let letter = |m: &MoveValue| m.letter().to_string();
    json!({
        "position": pos.to_string(),
        "rules": tb.rules().variant().name(),
        "pits": tb.rules().pits(),
        "stones": pos.stones(),
        "value": value,
        "terminal": moves.is_empty(),
        "moves": moves.iter().map(|m| json!({"move": letter(m), "value": m.value})).collect::<Vec<_>>(),
        "best": moves.iter().filter(|m| m.value == value).map(letter).collect::<Vec<_>>(),
    })
}

/// A small deterministic generator (xorshift), so failures reproduce.
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    /// A position of `pits` per side with at most `max` stones.
    fn position(&mut self, pits: usize, max: u32) -> Position {
        let mut counts = vec![0u32; 2 * pits];
        for _ in 0..self.below(max as u64 + 1) {
            counts[self.below(2 * pits as u64) as usize] += 1;
        }
        Position::from_counts(pits, &counts).unwrap()
    }
}

fn position_path(rules: &str, pits: usize, pos: &Position) -> String {
    format!("/v1/{rules}/{pits}/position/{pos}")
}

#[test]
fn health_says_ok() {
    let (status, body) = answer(get("/health"));
    assert_eq!((status, body), (StatusCode::OK, json!({"status": "ok"})));
}

#[test]
fn tables_lists_every_rule_set() {
    let (status, body) = answer(get("/v1/tables"));
    assert_eq!(status, StatusCode::OK, "{body}");
    let listed = body["tables"].as_array().unwrap();
    assert_eq!(listed.len(), 2, "{body}");
    for (entry, (rules, max)) in listed
        .iter()
        .zip([(kalah(), KALAH_MAX), (oware(), OWARE_MAX)])
    {
        let positions: u64 = (0..=max)
            .map(|n| LevelIndex::new(rules.pits(), n).count())
            .sum();
        assert_eq!(entry["id"], rules.id(), "{entry}");
        assert_eq!(entry["rules"], rules.variant().name(), "{entry}");
        assert_eq!(entry["pits"], rules.pits(), "{entry}");
        assert_eq!(entry["empty_capture"], true, "{entry}");
        assert_eq!(entry["max_level"], max, "{entry}");
        assert_eq!(
            entry["levels"],
            json!((0..=max).collect::<Vec<_>>()),
            "{entry}"
        );
        assert_eq!(entry["positions"], positions, "{entry}");
        assert!(entry["bytes"].as_u64().unwrap() > 0, "{entry}");
    }
}

/// What `levels` answers for one level, from `info --json`'s object of
/// its file: the same sizes and histogram, and the shares computed from
/// the histogram (even tables) or the exact share (forced ones).
fn expected_level(info: &Json) -> Json {
    let positions = info["positions"].as_u64().unwrap();
    let histogram = info["histogram"].as_object().unwrap();
    let count = |keep: fn(i64) -> bool| -> u64 {
        histogram
            .iter()
            .filter(|(v, _)| keep(v.parse().unwrap()))
            .map(|(_, c)| c.as_u64().unwrap())
            .sum()
    };
    let share = |n: u64| json!(n as f64 / positions as f64);
    let even = info["cycles"] == "even";
    let total: i64 = histogram
        .iter()
        .map(|(v, c)| v.parse::<i64>().unwrap() * c.as_u64().unwrap() as i64)
        .sum();
    let if_even = |value: Json| if even { value } else { Json::Null };
    json!({
        "stones": info["level"],
        "positions": positions,
        "bytes": info["bytes"],
        "bits_per_position": info["bits_per_position"],
        "histogram": info["histogram"],
        "won": if_even(share(count(|v| v > 0))),
        "drawn": if_even(share(count(|v| v == 0))),
        "lost": if_even(share(count(|v| v < 0))),
        "mean_value": if_even(json!(total as f64 / positions as f64)),
        "exact": info["exact"],
        "exact_share": info["exact_share"],
    })
}

#[test]
fn levels_match_info_json() {
    let root = fixture().root.to_str().unwrap();
    let infos: Vec<Json> =
        crate::cli::json_lines(&crate::cli::ok(&["info", "--json", "--dir", root]));
    for (path, id, rules, pits, cycles, max) in [
        (
            "/v1/oware/6/levels",
            "oware-6",
            "oware",
            6,
            "even",
            OWARE_MAX,
        ),
        (
            "/v1/kalah/4/levels?empty_capture=true",
            "kalah-4",
            "kalah",
            4,
            "even",
            KALAH_MAX,
        ),
        (
            "/v1/oware/6/levels?cycles=forced",
            "oware-6",
            "oware",
            6,
            "forced",
            FORCED_MAX,
        ),
    ] {
        let (status, body) = answer(get(path));
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        let expected: Vec<Json> = infos
            .iter()
            .filter(|i| i["rules"] == rules && i["pits"] == pits && i["cycles"] == cycles)
            .map(expected_level)
            .collect();
        assert_eq!(expected.len(), max as usize + 1, "{path}");
        assert_eq!(
            body,
            json!({"id": id, "rules": rules, "pits": pits, "empty_capture": true,
                   "cycles": cycles, "levels": expected}),
            "{path}"
        );
    }
}

#[test]
fn levels_errors_are_client_errors() {
    let message = assert_error(
        get("/v1/wari/6/levels"),
        StatusCode::NOT_FOUND,
        "out_of_range",
    );
    assert_eq!(message, "no even tables of wari-6 here");
    let message = assert_error(
        get("/v1/kalah/4/levels?cycles=forced"),
        StatusCode::NOT_FOUND,
        "out_of_range",
    );
    assert_eq!(message, "no forced tables of kalah-4 here");
    for path in [
        "/v1/oware/6/levels?cycles=sometimes",
        "/v1/chess/6/levels",
        "/v1/oware/six/levels",
        "/v1/oware/6/levels?empty_capture=false",
        "/v1/oware/6/levels?colour=red",
    ] {
        let response = get(path);
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{path}");
    }
}

#[test]
fn positions_match_the_library() {
    let f = fixture();
    let mut random = Random(7);
    for _ in 0..200 {
        let pos = random.position(6, OWARE_MAX);
        let (status, body) = answer(get(&position_path("oware", 6, &pos)));
        assert_eq!((status, body), (StatusCode::OK, expected(&f.oware, &pos)));
        let pos = random.position(4, KALAH_MAX);
        let (status, body) = answer(get(&position_path("kalah", 4, &pos)));
        assert_eq!((status, body), (StatusCode::OK, expected(&f.kalah, &pos)));
    }
    // Spaces (percent-encoded) are allowed around counts; terminal positions
    // have no moves.
    let (status, body) = answer(get("/v1/oware/6/position/%200,0,0,0,0,0/1,0,0,0,0,0"));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["terminal"], true, "{body}");
    assert_eq!(body["value"], -1, "{body}");
    assert_eq!(body["moves"], json!([]), "{body}");
}

#[test]
fn malformed_positions_are_client_errors() {
    let bad = |path: &str, status: StatusCode, kind: &str| {
        assert_error(get(path), status, kind);
    };
    bad(
        "/v1/oware/6/position/1,x,0,0,0,0/0,0,0,0,0,0",
        StatusCode::BAD_REQUEST,
        "notation",
    );
    bad(
        "/v1/oware/6/position/1,0,0/0,0,0",
        StatusCode::BAD_REQUEST,
        "notation",
    );
    bad(
        "/v1/oware/6/position/1,2,3",
        StatusCode::BAD_REQUEST,
        "notation",
    );
    bad(
        "/v1/oware/6/position/-1,0,0,0,0,0/0,0,0,0,0,0",
        StatusCode::BAD_REQUEST,
        "notation",
    );
    bad(
        "/v1/chess/6/position/1,0,0,0,0,0/0,0,0,0,0,0",
        StatusCode::BAD_REQUEST,
        "invalid_rules",
    );
    bad(
        "/v1/oware/9/position/1/1",
        StatusCode::BAD_REQUEST,
        "invalid_rules",
    );
    bad(
        "/v1/oware/six/position/1/1",
        StatusCode::BAD_REQUEST,
        "bad_request",
    );
    bad(
        "/v1/oware/99999999999999999999999/position/1/1",
        StatusCode::BAD_REQUEST,
        "bad_request",
    );
    bad(
        "/v1/oware/6/position/1,0,0,0,0,0/0,0,0,0,0,0?empty_capture=false",
        StatusCode::BAD_REQUEST,
        "bad_request",
    );
    bad(
        "/v1/kalah/4/position/1,0,0,0/0,0,0,0?empty_capture=maybe",
        StatusCode::BAD_REQUEST,
        "bad_request",
    );
    // Beyond the tables, or tables never built: 404 saying how far the
    // tables go, without the server's own paths or advice to run commands
    // on it (the command line's errors give those).
    for position in ["4,4,4,4,4,4/4,4,4,4,4,4", "4,2,4,0,0,0/0,0,0,0,0,0"] {
        let message = assert_error(
            get(&format!("/v1/oware/6/position/{position}")),
            StatusCode::NOT_FOUND,
            "out_of_range",
        );
        assert!(message.contains("hold at most 8"), "{message}");
        assert!(!message.contains("mancala-tb"), "{message}");
        let root = fixture().root.to_string_lossy().into_owned();
        assert!(!message.contains(&root), "{message}");
    }
    bad(
        "/v1/kalah/4/position/1,0,0,0/0,0,0,0?empty_capture=false",
        StatusCode::NOT_FOUND,
        "out_of_range",
    );
    bad(
        "/v1/awari/6/position/1,0,0,0,0,0/0,0,0,0,0,0",
        StatusCode::NOT_FOUND,
        "out_of_range",
    );
    bad("/v2/nothing", StatusCode::NOT_FOUND, "not_found");
    bad("/index.htm", StatusCode::NOT_FOUND, "not_found");
    let response = Client::new()
        .post(format!("{}/health", fixture().base))
        .send()
        .unwrap();
    assert_error(
        response,
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
    );
}

#[test]
fn a_batch_answers_each_position_in_place() {
    let f = fixture();
    let mut random = Random(11);
    let good: Vec<Position> = (0..300).map(|_| random.position(6, OWARE_MAX)).collect();
    let mut texts: Vec<String> = good.iter().map(|p| p.to_string()).collect();
    texts.insert(5, "1,2,3".into());
    texts.insert(9, "4,4,4,4,4,4/4,4,4,4,4,4".into());
    let (status, body) = answer(post(
        json!({"rules": "oware", "pits": 6, "positions": texts}).to_string(),
    ));
    assert_eq!(status, StatusCode::OK, "{body}");
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), texts.len());
    assert_eq!(results[5]["kind"], "notation", "{}", results[5]);
    assert_eq!(results[5]["position"], "1,2,3", "{}", results[5]);
    assert_eq!(results[9]["kind"], "out_of_range", "{}", results[9]);
    let answered: Vec<&Json> = results
        .iter()
        .enumerate()
        .filter(|(i, _)| ![5, 9].contains(i))
        .map(|(_, r)| r)
        .collect();
    for (result, pos) in answered.into_iter().zip(&good) {
        assert_eq!(*result, expected(&f.oware, pos));
    }
}

#[test]
fn malformed_bodies_are_client_errors() {
    let bad = |body: String, status: StatusCode, kind: &str| {
        assert_error(post(body), status, kind);
    };
    bad("{not json".into(), StatusCode::BAD_REQUEST, "bad_request");
    bad("[]".into(), StatusCode::BAD_REQUEST, "bad_request");
    bad(
        json!({"rules": "oware", "pits": 6}).to_string(),
        StatusCode::BAD_REQUEST,
        "bad_request",
    );
    bad(
        json!({"rules": "oware", "pits": 6, "positions": [], "state": {"position": "1,0,0,0,0,0/0,0,0,0,0,0", "to_move": "south"}}).to_string(),
        StatusCode::BAD_REQUEST,
        "bad_request",
    );
    bad(
        json!({"rules": "oware", "pits": -6, "positions": []}).to_string(),
        StatusCode::BAD_REQUEST,
        "bad_request",
    );
    bad(
        json!({"rules": "go", "pits": 6, "positions": []}).to_string(),
        StatusCode::BAD_REQUEST,
        "invalid_rules",
    );
    bad(
        json!({"rules": "oware", "pits": 6, "state": {"position": "1,0,0,0,0,0/0,0,0,0,0,0", "to_move": "east"}}).to_string(),
        StatusCode::BAD_REQUEST,
        "notation",
    );
    bad(
        json!({"rules": "oware", "pits": 6, "state": {"position": "1,0,0,0,0,0/0,0,0,0,0,0", "to_move": "south", "stores": [4294967295u32, 0]}}).to_string(),
        StatusCode::BAD_REQUEST,
        "bad_request",
    );
    let batch = vec!["0,0,0,0,0,0/0,0,0,0,0,0"; MAX_BATCH + 1];
    bad(
        json!({"rules": "oware", "pits": 6, "positions": batch}).to_string(),
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
    );
    let huge = format!(
        "{{\"rules\":\"oware\",\"pits\":6,\"positions\":[\"{}\"]}}",
        " ".repeat(MAX_BODY)
    );
    bad(huge, StatusCode::PAYLOAD_TOO_LARGE, "too_large");
}

#[test]
fn a_game_state_is_analyzed_by_the_engine() {
    let f = fixture();
    // Within the tables: lookups only, and the tables' values.
    let pos = Position::parse(4, "2,0,1,3/0,2,0,1").unwrap();
    let (status, body) = answer(post(
        json!({"rules": "kalah", "pits": 4, "state": {"position": pos.to_string(), "to_move": "north", "stores": [10, 7]}})
            .to_string(),
    ));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["source"], "tables", "{body}");
    assert_eq!(body["exact"], true, "{body}");
    assert_eq!(body["to_move"], "north", "{body}");
    assert_eq!(body["value"], f.kalah.value(&pos).unwrap(), "{body}");
    assert_eq!(
        body["final_margin"],
        -3 + f.kalah.value(&pos).unwrap(),
        "{body}"
    );
    let moves: Vec<(String, i32)> = f
        .kalah
        .move_values(&pos)
        .unwrap()
        .iter()
        .map(|m| (m.letter().to_string(), m.value))
        .collect();
    let served: Vec<(String, i32)> = body["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["move"].as_str().unwrap().into(),
                m["value"].as_i64().unwrap() as i32,
            )
        })
        .collect();
    assert_eq!(served, moves);

    // Above the tables: a search, exact for Kalah, equal to deeper tables.
    let deep = f.root.with_file_name("server-tables-deeper");
    build(&BuildOptions::new(&deep, kalah(), 14), &Quiet).unwrap();
    let pos = Position::parse(4, "3,2,1,1/2,1,1,3").unwrap();
    let (status, body) = answer(post(
        json!({"rules": "kalah", "pits": 4, "state": {"position": pos.to_string(), "to_move": "south"}})
            .to_string(),
    ));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["source"], "search", "{body}");
    assert_eq!(body["exact"], true, "{body}");
    let deeper: Tablebase = Tablebase::open(&deep, kalah()).unwrap();
    assert_eq!(body["value"], deeper.value(&pos).unwrap(), "{body}");

    // An Oware game with history: the third repetition ends the game.
    let pos = "1,0,0,0,0,0/0,0,0,0,0,1";
    let history: Vec<Json> = (0..2)
        .map(|_| json!({"position": pos, "to_move": "south"}))
        .collect();
    let (status, body) = answer(post(
        json!({"rules": "oware", "pits": 6, "state": {"position": pos, "to_move": "south", "stores": [23, 23], "history": history}})
            .to_string(),
    ));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["moves"], json!([]), "{body}");
    assert_eq!(body["pv_end"], "game-over", "{body}");
}

fn post_play(body: Json) -> Response {
    Client::new()
        .post(format!("{}/v1/play", fixture().base))
        .json(&body)
        .send()
        .unwrap()
}

#[test]
fn play_answers_the_next_state_and_the_sowing() {
    // Oware, f (3) sows g, h, i and captures them (7 of the 11 North holds).
    let state =
        json!({"position": "0,0,0,0,2,3/1,1,2,0,0,4", "to_move": "south", "stores": [20, 10]});
    let (status, body) = answer(post_play(
        json!({"rules": "oware", "pits": 6, "state": state, "move": "f"}),
    ));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["mover"], "south");
    let north = |pit: u32| json!({"side": "north", "pit": pit});
    assert_eq!(
        body["sowing"]["path"],
        json!([north(0), north(1), north(2)])
    );
    assert_eq!(body["sowing"]["gain"], 7);
    assert_eq!(
        body["sowing"]["captured"][2],
        json!({"side": "north", "pit": 2, "stones": 3})
    );
    assert_eq!(
        body["state"],
        json!({"position": "0,0,0,0,0,4/0,0,0,0,2,0", "to_move": "north", "stores": [27, 10],
               "history": [{"position": "0,0,0,0,2,3/1,1,2,0,0,4", "to_move": "south"}]})
    );
    // 27 of 43 stones: a majority.
    assert_eq!(
        body["end"],
        json!({"reason": "majority", "stores": [27, 10], "winner": "south"})
    );

    // Kalah: the store is on the path, and an extra turn keeps the mover.
    let state = json!({"position": "1,1,1,1/1,1,1,1", "to_move": "north"});
    let (status, body) = answer(post_play(
        json!({"rules": "kalah", "pits": 4, "state": state, "move": "d"}),
    ));
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["sowing"]["path"],
        json!([{"side": "north", "store": true}])
    );
    assert_eq!(body["sowing"]["extra_turn"], true);
    assert_eq!(body["state"]["to_move"], "north");
    assert_eq!(body["end"], Json::Null);
}

#[test]
fn illegal_plays_are_client_errors() {
    let state = json!({"position": "0,0,0,0,2,3/1,1,2,0,0,4", "to_move": "south"});
    let play = |mv: &str| json!({"rules": "oware", "pits": 6, "state": state, "move": mv});
    // An empty pit, a letter off the row, a game already over.
    assert_error(post_play(play("a")), StatusCode::BAD_REQUEST, "notation");
    assert_error(post_play(play("g")), StatusCode::BAD_REQUEST, "notation");
    let over = json!({"rules": "oware", "pits": 6, "move": "e",
                      "state": {"position": "0,0,0,0,2,3/1,1,2,0,0,4", "to_move": "south", "stores": [30, 0]}});
    let message = assert_error(post_play(over), StatusCode::BAD_REQUEST, "notation");
    assert!(message.contains("over"), "{message}");
    assert_error(
        post_play(json!({"rules": "oware"})),
        StatusCode::BAD_REQUEST,
        "bad_request",
    );
}

#[test]
fn the_web_board_is_served() {
    for (path, content_type) in [
        ("/", "text/html"),
        ("/app.js", "text/javascript"),
        ("/style.css", "text/css"),
    ] {
        let response = get(path);
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let got = response.headers()["content-type"]
            .to_str()
            .unwrap()
            .to_string();
        assert!(got.starts_with(content_type), "{path}: {got}");
    }
}

#[test]
fn a_damaged_table_is_a_server_error() {
    let dir = tempfile::tempdir().unwrap();
    build(&BuildOptions::new(dir.path(), oware(), 4), &Quiet).unwrap();
    let file = tables_dir(dir.path(), &oware(), Cycles::Even).join(level_file_name(4));
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let server = Served::start(dir.path());
    let base = &server.base;
    let client = Client::new();
    let damaged = client
        .get(format!(
            "{base}/v1/oware/6/position/1,1,1,1,0,0/0,0,0,0,0,0"
        ))
        .send()
        .unwrap();
    assert_error(damaged, StatusCode::INTERNAL_SERVER_ERROR, "corrupted");
    // Lower levels still answer, and the listing reports the damage.
    let (status, _) = answer(
        client
            .get(format!(
                "{base}/v1/oware/6/position/1,1,1,0,0,0/0,0,0,0,0,0"
            ))
            .send()
            .unwrap(),
    );
    assert_eq!(status, StatusCode::OK);
    let (status, body) = answer(client.get(format!("{base}/v1/tables")).send().unwrap());
    assert_eq!(status, StatusCode::OK);
    assert!(body["tables"][0]["error"].is_string(), "{body}");
    let levels = client
        .get(format!("{base}/v1/oware/6/levels"))
        .send()
        .unwrap();
    assert_error(levels, StatusCode::INTERNAL_SERVER_ERROR, "corrupted");
}

#[test]
fn the_binary_prints_its_address_and_serves() {
    // A server of its own: its startup line is what this test reads.
    let server = Served::start(&fixture().root);
    let body: Json = Client::new()
        .get(format!(
            "{}/v1/oware/6/position/1,1,1,1,1,2/0,0,0,0,0,0",
            server.base
        ))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let pos = Position::parse(6, "1,1,1,1,1,2/0,0,0,0,0,0").unwrap();
    assert_eq!(body, expected(&fixture().oware, &pos));
}

/// One request of the load check and the answer it must get.
fn load_request(client: &Client, random: &mut Random) -> (reqwest::blocking::RequestBuilder, Json) {
    let f = fixture();
    match random.below(3) {
        0 => {
            let pos = random.position(6, OWARE_MAX);
            let url = format!("{}{}", f.base, position_path("oware", 6, &pos));
            (client.get(url), expected(&f.oware, &pos))
        }
        1 => {
            let pos = random.position(4, KALAH_MAX);
            let url = format!("{}{}", f.base, position_path("kalah", 4, &pos));
            (client.get(url), expected(&f.kalah, &pos))
        }
        _ => {
            let batch: Vec<Position> = (0..10).map(|_| random.position(6, OWARE_MAX)).collect();
            let texts: Vec<String> = batch.iter().map(|p| p.to_string()).collect();
            let body = json!({"rules": "oware", "pits": 6, "positions": texts});
            let results: Vec<Json> = batch.iter().map(|p| expected(&f.oware, p)).collect();
            (
                client.post(format!("{}/v1/analyze", f.base)).json(&body),
                json!({"rules": "oware", "pits": 6, "results": results}),
            )
        }
    }
}

#[test]
fn load_ten_thousand_requests_from_eight_clients() {
    const CLIENTS: u64 = 8;
    const REQUESTS: u64 = 10_000;
    fixture();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for client in 0..CLIENTS {
            scope.spawn(move || {
                let mut random = Random(1 + client);
                let http = Client::new();
                for _ in 0..REQUESTS / CLIENTS {
                    let (request, want) = load_request(&http, &mut random);
                    let response = request.send().unwrap();
                    let (status, body) = answer(response);
                    assert_eq!((status, body), (StatusCode::OK, want));
                }
            });
        }
    });
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "load: {REQUESTS} requests from {CLIENTS} clients in {seconds:.2} s = {:.0} requests/s",
        REQUESTS as f64 / seconds
    );
}

/// `POST /v1/analyze` of a state within depth tables gives the position's
/// depth to conversion and each move's, as the library reads them; a rule
/// set without depth tables gives none.
#[test]
fn an_analysis_gives_depths_where_depth_tables_are() {
    use mancala_probe::Depth;

    let root = tempfile::tempdir().unwrap();
    let mut options = BuildOptions::new(root.path(), oware(), 8);
    options.depths = true;
    build(&options, &Quiet).unwrap();
    build(&BuildOptions::new(root.path(), kalah(), 6), &Quiet).unwrap();
    let server = Served::start(root.path());
    let values: Tablebase = Tablebase::open(root.path(), oware()).unwrap();
    let depths: Tablebase<Depth> = Tablebase::open(root.path(), oware()).unwrap();
    let analyze = |rules: &str, pits: usize, pos: &Position| -> Json {
        let body = json!({"rules": rules, "pits": pits, "state": {"position": pos.to_string(), "to_move": "south"}});
        let response = Client::new()
            .post(format!("{}/v1/analyze", server.base))
            .json(&body)
            .send()
            .unwrap();
        let (status, json) = answer(response);
        assert_eq!(status, StatusCode::OK, "{json}");
        json
    };
    let index = LevelIndex::new(6, 8);
    let mut ahead_and_behind = (0, 0);
    for at in (0..index.count()).step_by(97) {
        let pos = index.unrank(at);
        let got = analyze("oware", 6, &pos);
        let depth = depths.depth(&values, &pos).unwrap();
        assert_eq!(got["depth"], json!(depth), "{pos}: {got}");
        assert_eq!(got["converts"], json!(true), "{got}");
        let value = values.value(&pos).unwrap();
        ahead_and_behind.0 += usize::from(value > 0 && depth.is_some());
        ahead_and_behind.1 += usize::from(value < 0 && depth.is_some());
        let mut legal = Vec::new();
        oware().for_each_move(&pos, |m| legal.push(*m));
        let moves = got["moves"].as_array().unwrap();
        assert_eq!(moves.len(), legal.len());
        for (shown, m) in moves.iter().zip(&legal) {
            let wanted = depths.move_depth(&values, m).unwrap();
            assert_eq!(shown["depth"], json!(wanted), "{pos}: {shown}");
        }
    }
    assert!(
        ahead_and_behind.0 > 10 && ahead_and_behind.1 > 10,
        "{ahead_and_behind:?}"
    );
    let kalah_start = LevelIndex::new(4, 6).unrank(5);
    let got = analyze("kalah", 4, &kalah_start);
    assert!(got.get("depth").is_none(), "{got}");
    assert!(got["moves"][0].get("depth").is_none(), "{got}");
    // Kalah cannot cycle: every line realizes its value.
    assert_eq!(got["converts"], json!(true), "{got}");
    // Oware without depth tables, within the tables: the engine's search
    // of the value-keeping moves proves the order, without a depth shown.
    let body = json!({"rules": "oware", "pits": 6, "state": {"position": "0,0,0,0,1,1/1,0,0,0,0,1", "to_move": "south"}});
    let (status, got) = answer(post(body.to_string()));
    assert_eq!(status, StatusCode::OK, "{got}");
    assert!(got.get("depth").is_none(), "{got}");
    assert_eq!(got["converts"], json!(true), "{got}");
}

/// The OpenAPI document as the server serves it.
fn served_openapi(base: &str) -> Json {
    let response = Client::new()
        .get(format!("{base}/openapi.json"))
        .send()
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    response.json().unwrap()
}

/// Real answers held to the OpenAPI document: each checked against the
/// schema the document gives for its route, method and status, and each
/// status the document gives for a route seen at least once.
struct Conformance {
    document: Json,
    /// `(path, method, status)` of every answer checked.
    seen: std::collections::BTreeSet<(String, String, String)>,
}

impl Conformance {
    fn new() -> Conformance {
        Conformance {
            document: served_openapi(&fixture().base),
            seen: Default::default(),
        }
    }

    /// `value` held to `schema`, a schema of the document.
    fn conforms(&self, schema: &Json, value: &Json, what: &str) {
        let wrong = crate::schema::violations(&self.document, schema, value);
        assert!(wrong.is_empty(), "{what}: {value}\n{}", wrong.join("\n"));
    }

    /// The answer to `request`, sent to the route the document names
    /// `path` (its template) with `method`, checked against the
    /// document's response of its status (or its `default`): content type
    /// and body. A JSON body sent for a success is held to the document's
    /// request body too. Returns the status and the JSON body (`null` for
    /// other content).
    fn check(
        &mut self,
        method: &str,
        path: &str,
        request: reqwest::blocking::RequestBuilder,
    ) -> (StatusCode, Json) {
        let request = request.build().unwrap();
        let sent: Option<Json> = request
            .body()
            .and_then(|b| b.as_bytes())
            .and_then(|b| serde_json::from_slice(b).ok());
        let url = request.url().to_string();
        let response = Client::new().execute(request).unwrap();
        let status = response.status();
        let operation = &self.document["paths"][path][method];
        assert!(operation.is_object(), "{method} {path} is not documented");
        let responses = &operation["responses"];
        let key = if responses.get(status.as_str()).is_some() {
            status.as_str()
        } else {
            "default"
        };
        self.seen
            .insert((path.to_string(), method.to_string(), key.to_string()));
        let what = format!("{method} {url} → {status} ({path} {key})");
        let documented = self.response(&responses[key]).clone();
        if let (Some(sent), true) = (sent, status.is_success()) {
            let body = &operation["requestBody"]["content"]["application/json"]["schema"];
            self.conforms(body, &sent, &format!("{what}: the request"));
        }
        self.content(&documented, response, &what)
    }

    /// A response object of the document, its `$ref` followed.
    fn response<'a>(&'a self, response: &'a Json) -> &'a Json {
        match response["$ref"].as_str() {
            Some(reference) => crate::schema::resolve(&self.document, reference),
            None => response,
        }
    }

    /// `response` checked against the documented response object
    /// `documented`.
    fn content(&self, documented: &Json, response: Response, what: &str) -> (StatusCode, Json) {
        let status = response.status();
        let content_type = response.headers()["content-type"].to_str().unwrap();
        let media = content_type.split(';').next().unwrap().trim().to_string();
        let schema = &documented["content"][&media]["schema"];
        assert!(
            schema.is_object(),
            "{what}: {content_type} is not documented"
        );
        let text = response.text().unwrap();
        let body = if media == "application/json" {
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: {text:?}: {e}"))
        } else {
            Json::String(text)
        };
        self.conforms(schema, &body, what);
        (status, if body.is_string() { Json::Null } else { body })
    }

    /// An answer that no documented operation gives (an unknown route, a
    /// method the route does not take), checked against the document's
    /// general error response.
    fn check_error(&self, request: reqwest::blocking::RequestBuilder) -> (StatusCode, Json) {
        let response = request.send().unwrap();
        let what = format!("{} (components/responses/Error)", response.url());
        let documented = &self.document["components"]["responses"]["Error"];
        self.content(documented, response, &what)
    }

    /// Every status the document gives for every route, but `default`,
    /// among those seen.
    fn assert_all_seen(&self) {
        let mut unseen = Vec::new();
        for (path, operations) in self.document["paths"].as_object().unwrap() {
            for (method, operation) in operations.as_object().unwrap() {
                for key in operation["responses"].as_object().unwrap().keys() {
                    let seen = (path.clone(), method.clone(), key.clone());
                    if key != "default" && !self.seen.contains(&seen) {
                        unseen.push(format!("{method} {path} {key}"));
                    }
                }
            }
        }
        assert!(unseen.is_empty(), "never checked: {unseen:?}");
    }
}

/// Every route the server answers is in the OpenAPI document, and every
/// operation of the document is a route, so neither can be added alone.
#[test]
fn the_openapi_document_describes_every_route() {
    let document = served_openapi(&fixture().base);
    assert_eq!(
        document,
        serde_json::from_str::<Json>(include_str!("../../docs/openapi.json")).unwrap(),
        "/openapi.json serves docs/openapi.json"
    );
    assert!(document["openapi"].as_str().unwrap().starts_with("3.1."));
    assert_eq!(document["info"]["version"], env!("CARGO_PKG_VERSION"));
    let documented: std::collections::BTreeSet<(String, String)> = document["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, operations)| {
            let methods = operations.as_object().unwrap().keys();
            methods.map(move |method| (method.clone(), path.clone()))
        })
        .collect();
    let routes: std::collections::BTreeSet<(String, String)> = mancala_tb::server::endpoints()
        .into_iter()
        .map(|(method, path)| (method.to_string(), path))
        .collect();
    assert_eq!(
        documented, routes,
        "the OpenAPI document's operations (left) and the server's routes (right)"
    );
}

/// Every endpoint's real answers, successes and errors, conform to the
/// OpenAPI document the server serves, and every response the document
/// gives is among them.
#[test]
fn every_answer_conforms_to_the_openapi_document() {
    let f = fixture();
    let base = f.base.as_str();
    let client = Client::new();
    let mut api = Conformance::new();
    let get = |path: &str| client.get(format!("{base}{path}"));
    let post = |path: &str, body: Json| client.post(format!("{base}{path}")).json(&body);
    let status = |(status, _): (StatusCode, Json)| status;

    // Tables with depths, a damaged table and a table directory that
    // vanishes, each behind a server of its own.
    let depth_dir = tempfile::tempdir().unwrap();
    let mut options = BuildOptions::new(depth_dir.path(), oware(), 6);
    options.depths = true;
    build(&options, &Quiet).unwrap();
    let with_depths = Served::start(depth_dir.path());
    let damaged_dir = tempfile::tempdir().unwrap();
    build(&BuildOptions::new(damaged_dir.path(), oware(), 4), &Quiet).unwrap();
    let file = tables_dir(damaged_dir.path(), &oware(), Cycles::Even).join(level_file_name(4));
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let damaged = Served::start(damaged_dir.path());
    // A table directory that vanishes under its server.
    let vanishing = tempfile::tempdir().unwrap();
    let vanished = Served::start(vanishing.path());
    vanishing.close().unwrap();
    let at = |server: &Served, path: &str| client.get(format!("{}{path}", server.base));

    let health = "/health";
    assert_eq!(
        status(api.check("get", health, get(health))),
        StatusCode::OK
    );
    let openapi = "/openapi.json";
    assert_eq!(
        status(api.check("get", openapi, get(openapi))),
        StatusCode::OK
    );

    let tables = "/v1/tables";
    assert_eq!(
        status(api.check("get", tables, get(tables))),
        StatusCode::OK
    );
    let (code, body) = api.check("get", tables, at(&damaged, tables));
    assert_eq!(code, StatusCode::OK);
    assert!(body["tables"][0]["error"].is_string(), "{body}");
    let (code, body) = api.check("get", tables, at(&vanished, tables));
    assert_eq!(
        (code, body["kind"].as_str()),
        (StatusCode::INTERNAL_SERVER_ERROR, Some("missing"))
    );

    let position = "/v1/{rules}/{pits}/position/{notation}";
    for (request, want) in [
        (
            get("/v1/oware/6/position/1,0,3,0,2,0/0,2,0,0,0,0"),
            StatusCode::OK,
        ),
        (
            get("/v1/oware/6/position/0,0,0,0,0,0/1,0,0,0,0,0"),
            StatusCode::OK,
        ),
        (
            get("/v1/kalah/4/position/1,0,2,0/0,1,0,3?empty_capture=true"),
            StatusCode::OK,
        ),
        (
            at(&with_depths, "/v1/oware/6/position/1,0,3,0,0,0/0,1,0,0,0,1"),
            StatusCode::OK,
        ),
        (get("/v1/oware/6/position/1,x/0"), StatusCode::BAD_REQUEST),
        (get("/v1/chess/6/position/1/1"), StatusCode::BAD_REQUEST),
        (get("/v1/oware/six/position/1/1"), StatusCode::BAD_REQUEST),
        (
            get("/v1/oware/6/position/4,4,4,4,4,4/4,4,4,4,4,4"),
            StatusCode::NOT_FOUND,
        ),
        (
            at(&damaged, "/v1/oware/6/position/1,1,1,1,0,0/0,0,0,0,0,0"),
            StatusCode::INTERNAL_SERVER_ERROR,
        ),
    ] {
        let (code, body) = api.check("get", position, request);
        assert_eq!(code, want, "{body}");
    }
    let (_, body) = api.check(
        "get",
        position,
        at(&with_depths, "/v1/oware/6/position/2,0,1,0,0,0/0,1,0,0,0,1"),
    );
    assert!(body.get("depth").is_some(), "depths are checked: {body}");

    let levels = "/v1/{rules}/{pits}/levels";
    for (request, want) in [
        (get("/v1/oware/6/levels"), StatusCode::OK),
        (get("/v1/oware/6/levels?cycles=forced"), StatusCode::OK),
        (
            get("/v1/oware/6/levels?cycles=sometimes"),
            StatusCode::BAD_REQUEST,
        ),
        (
            get("/v1/oware/6/levels?colour=red"),
            StatusCode::BAD_REQUEST,
        ),
        (get("/v1/wari/6/levels"), StatusCode::NOT_FOUND),
        (
            at(&damaged, "/v1/oware/6/levels"),
            StatusCode::INTERNAL_SERVER_ERROR,
        ),
    ] {
        let (code, body) = api.check("get", levels, request);
        assert_eq!(code, want, "{body}");
    }

    let analyze = "/v1/analyze";
    let batch = |positions: &[&str]| json!({"rules": "oware", "pits": 6, "positions": positions});
    let state = |rules: &str, pits: usize, state: Json| json!({"rules": rules, "pits": pits, "state": state});
    let repeated = "1,0,0,0,0,0/0,0,0,0,0,1";
    let history = vec![json!({"position": repeated, "to_move": "south"}); 2];
    for (request, want) in [
        (
            post(
                analyze,
                batch(&[
                    "1,0,3,0,2,0/0,2,0,0,0,0",
                    "0,0,0,0,0,0/1,0,0,0,0,0",
                    "1,2,3",
                    "4,4,4,4,4,4/4,4,4,4,4,4",
                ]),
            ),
            StatusCode::OK,
        ),
        (
            client
                .post(format!("{}{analyze}", with_depths.base))
                .json(&batch(&["1,0,3,0,0,0/0,1,0,0,0,1"])),
            StatusCode::OK,
        ),
        (
            client
                .post(format!("{}{analyze}", damaged.base))
                .json(&batch(&["1,1,1,1,0,0/0,0,0,0,0,0"])),
            StatusCode::OK,
        ),
        (
            post(
                analyze,
                state(
                    "kalah",
                    4,
                    json!({"position": "2,0,1,3/0,2,0,1", "to_move": "north", "stores": [10, 7]}),
                ),
            ),
            StatusCode::OK,
        ),
        (
            post(
                analyze,
                state(
                    "kalah",
                    4,
                    json!({"position": "3,2,1,1/2,1,1,3", "to_move": "south"}),
                ),
            ),
            StatusCode::OK,
        ),
        (
            post(
                analyze,
                state(
                    "oware",
                    6,
                    json!({"position": repeated, "to_move": "south", "stores": [23, 23], "history": history}),
                ),
            ),
            StatusCode::OK,
        ),
        (
            client
                .post(format!("{}{analyze}", with_depths.base))
                .json(&state(
                    "oware",
                    6,
                    json!({"position": "1,0,3,0,0,0/0,1,0,0,0,1", "to_move": "south"}),
                )),
            StatusCode::OK,
        ),
        (
            post(analyze, json!({"rules": "oware", "pits": 6})),
            StatusCode::BAD_REQUEST,
        ),
        (
            post(analyze, json!({"rules": "go", "pits": 6, "positions": []})),
            StatusCode::BAD_REQUEST,
        ),
        (
            post(
                analyze,
                batch(&vec!["0,0,0,0,0,0/0,0,0,0,0,0"; MAX_BATCH + 1]),
            ),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
        (
            client
                .post(format!("{}{analyze}", damaged.base))
                .json(&state(
                    "oware",
                    6,
                    json!({"position": "1,1,1,1,0,0/0,0,0,0,0,0", "to_move": "south"}),
                )),
            StatusCode::INTERNAL_SERVER_ERROR,
        ),
    ] {
        let (code, body) = api.check("post", analyze, request);
        assert_eq!(code, want, "{body}");
    }

    let play = "/v1/play";
    let oware_state =
        json!({"position": "0,0,0,0,2,3/1,1,2,0,0,4", "to_move": "south", "stores": [20, 10]});
    let kalah_state = json!({"position": "1,1,1,1/1,1,1,1", "to_move": "north"});
    let long_history = vec![json!({"position": repeated, "to_move": "south"}); 2001];
    for (body, want) in [
        (
            json!({"rules": "oware", "pits": 6, "state": oware_state, "move": "f"}),
            StatusCode::OK,
        ),
        (
            json!({"rules": "kalah", "pits": 4, "state": kalah_state, "move": "d"}),
            StatusCode::OK,
        ),
        (
            json!({"rules": "kalah", "pits": 4, "state": kalah_state, "move": "a"}),
            StatusCode::OK,
        ),
        (
            json!({"rules": "oware", "pits": 6, "state": oware_state, "move": "a"}),
            StatusCode::BAD_REQUEST,
        ),
        (json!({"rules": "oware"}), StatusCode::BAD_REQUEST),
        (
            json!({"rules": "oware", "pits": 6, "move": "a",
                   "state": {"position": repeated, "to_move": "south", "history": long_history}}),
            StatusCode::PAYLOAD_TOO_LARGE,
        ),
    ] {
        let (code, answer) = api.check("post", play, post(play, body));
        assert_eq!(code, want, "{answer}");
    }

    for path in ["/", "/app.js", "/style.css"] {
        assert_eq!(status(api.check("get", path, get(path))), StatusCode::OK);
    }
    let (code, body) = api.check_error(get("/v2/nothing"));
    assert_eq!(
        (code, body["kind"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let (code, body) = api.check_error(client.post(format!("{base}/health")));
    assert_eq!(
        (code, body["kind"].as_str()),
        (StatusCode::METHOD_NOT_ALLOWED, Some("method_not_allowed"))
    );
    api.assert_all_seen();
}
