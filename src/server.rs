//! `mancala-tb serve`: the tables as an HTTP/JSON API.
//!
//! Endpoints (all answers JSON):
//!
//! - `GET /health` → `{"status":"ok"}`, for load balancers and scripts
//!   waiting for the server to come up.
//! - `GET /v1/tables` → the rule sets under the table directory, each with
//!   its levels, positions and bytes.
//! - `GET /v1/{rules}/{pits}/position/{notation}` → value and move values of
//!   one position (`?empty_capture=false` selects the Kalah option).
//! - `GET /v1/{rules}/{pits}/levels` → every level of a rule set's tables
//!   as its header gives it: positions, bytes, bits per position, the value
//!   histogram and the shares the charts draw ([`LevelSummary::json`];
//!   `?cycles=forced` for the forced tables).
//! - `POST /v1/analyze` → a batch of positions
//!   (`{"rules","pits","positions":[...]}`, answered from one batched probe,
//!   an error in place of each bad position) or a game state
//!   (`{"rules","pits","state":{...}}`, answered by the [`Engine`]).
//! - `POST /v1/play` → a game state and a move (`{"rules","pits","state",
//!   "move"}`): the next state, where each stone fell, what was captured
//!   and whether the game ended, so that a board needs no rules of its own.
//! - `GET /openapi.json` → the OpenAPI document of all of these
//!   (`docs/openapi.json`).
//! - `GET /`, `/app.js`, `/style.css` → the web board, a page built into
//!   the binary that plays and analyses through the endpoints above.
//!
//! Errors are `{"error": "...", "kind": "..."}` with a status that says
//! whose fault it is: 400 for input that cannot be read, 404 for a position
//! the tables do not cover or an unknown route, 413 for a request over the
//! limits, 500 only for a damaged or vanished table. User input never
//! panics the server, and a panic in a worker is a 500, not a crash.
//!
//! One [`Tablebase`] per rule set is opened on first use and shared by every
//! request; probes and searches are blocking work and run on tokio's
//! blocking pool, so the async workers keep accepting requests.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::handler::Handler;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, MethodRouter};
use axum::{middleware, Json, Router};
use http_body_util::BodyExt;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use mancala_core::{parse_move, Cycles, GameState, Position, Rules, Side, Variant};
use mancala_engine::{Engine, Limits};
use mancala_format::rule_sets;
use mancala_probe::{Access, Depth, Even, Forced, TableKind, Tablebase, DEFAULT_CACHE_BYTES};
use serde::Deserialize;
use serde_json::{json, Value as JsonValue};
use tokio::sync::Semaphore;

use crate::answer::{answer_many, answer_one, Depths, Failure};
use crate::json;
use crate::levels::LevelSummary;

/// Most positions in one batch: a batch is answered in one blocking call,
/// so its size bounds how long one request holds a worker.
pub const MAX_BATCH: usize = 10_000;

/// Largest request body, in bytes: room for a full batch of 8-pit
/// positions with whitespace.
pub const MAX_BODY: usize = 1 << 20;

/// Thinking time of each search the engine runs for a game state above the
/// tables; the answer then says whether it is `exact`.
pub const SEARCH_TIME: Duration = Duration::from_secs(2);

/// Wall time of one game-state analysis above the tables, all its searches
/// (one per move and per ply of the perfect line) together: past it the
/// answer is the best estimate, marked inexact, and its line is cut.
pub const ANALYZE_TIME: Duration = Duration::from_secs(10);

/// Transposition-table memory of a request's engine: small, since every
/// request gets its own.
const SEARCH_TT_BYTES: usize = 3 << 19;

/// Searches running at once; more wait. Searches are CPU-bound, so more
/// than one per core only makes each slower.
const CONCURRENT_SEARCHES: usize = 2;

/// Longest game history accepted, in positions: bounds the repetition
/// checks, which scan it.
const MAX_HISTORY: usize = 2_000;

/// Largest store accepted: far above any real game, small enough that
/// store arithmetic cannot overflow.
const MAX_STORE: u32 = 100_000;

/// An error answer: status, machine-readable kind and a message.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    kind: &'static str,
    message: String,
}

impl ApiError {
    fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            kind,
            message: message.into(),
        }
    }

    fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    fn too_large(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", message)
    }

    fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
    }

    fn json(&self) -> JsonValue {
        json!({"error": self.message, "kind": self.kind})
    }
}

impl From<Failure> for ApiError {
    /// The user's mistakes are 4xx; only the tables' own faults are 500.
    fn from(failure: Failure) -> ApiError {
        let status = match failure.kind {
            "notation" | "invalid_rules" => StatusCode::BAD_REQUEST,
            "out_of_range" => StatusCode::NOT_FOUND,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, failure.kind, failure.message)
    }
}

impl From<mancala_core::Error> for ApiError {
    fn from(e: mancala_core::Error) -> ApiError {
        Failure::of_rules(&e).into()
    }
}

impl From<mancala_probe::Error> for ApiError {
    fn from(e: mancala_probe::Error) -> ApiError {
        Failure::of_probe(&e).into()
    }
}

impl From<mancala_engine::Error> for ApiError {
    fn from(e: mancala_engine::Error) -> ApiError {
        match e {
            mancala_engine::Error::Rules(e) => e.into(),
            mancala_engine::Error::Tables(e) => e.into(),
            e @ mancala_engine::Error::OutOfMemory { .. } => ApiError::internal(e.to_string()),
        }
    }
}

impl From<PathRejection> for ApiError {
    fn from(e: PathRejection) -> ApiError {
        ApiError::bad_request(e.body_text())
    }
}

impl From<QueryRejection> for ApiError {
    fn from(e: QueryRejection) -> ApiError {
        ApiError::bad_request(e.body_text())
    }
}

impl From<mancala_format::FormatError> for ApiError {
    fn from(e: mancala_format::FormatError) -> ApiError {
        Failure::of_format(&e).into()
    }
}

impl From<BytesRejection> for ApiError {
    /// The body limit's rejection is a 413; any other unreadable body a 400.
    fn from(e: BytesRejection) -> ApiError {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::too_large(format!("request body over {MAX_BODY} bytes"))
        } else {
            ApiError::bad_request(e.body_text())
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.json())).into_response()
    }
}

type ApiResult = Result<Json<JsonValue>, ApiError>;

/// What every request shares: the table directory, the tablebases opened so
/// far and the search slots.
struct Shared {
    root: PathBuf,
    /// The root as it appears inside a JSON string, for [`served_paths`].
    root_in_json: String,
    open: Opened<Even>,
    /// The depth tables beside the even ones, where there are any.
    depths: Opened<Depth>,
    searches: Semaphore,
}

/// Tablebases of one kind, by rule set, opened on first use.
struct Opened<K: TableKind>(RwLock<HashMap<Rules, Arc<Tablebase<K>>>>);

impl<K: TableKind> Opened<K> {
    fn new() -> Opened<K> {
        Opened(RwLock::new(HashMap::new()))
    }

    /// The tablebase of `rules` under `root`, opened on first use. Opening
    /// maps nothing yet (levels are mapped when probed), so a rule set
    /// without tables is an empty tablebase whose probes are
    /// `OutOfRange`; it is kept only if `keep_empty` (then tables built
    /// later are found by [`Opened::forget_changed`]), so that requests for
    /// any rule set cannot pile up tablebases.
    fn get(
        &self,
        root: &std::path::Path,
        rules: Rules,
        keep_empty: bool,
    ) -> mancala_probe::Result<Arc<Tablebase<K>>> {
        if let Some(tb) = self.read().get(&rules) {
            return Ok(tb.clone());
        }
        // Read, not mapped: files that change under the server give errors
        // for the positions that need them, never a fault.
        let tb = Tablebase::open_with(root, rules, DEFAULT_CACHE_BYTES, Access::Read)?;
        let tb = Arc::new(tb);
        if tb.max_level().is_none() && !keep_empty {
            return Ok(tb);
        }
        let mut open = self.0.write().unwrap_or_else(|e| e.into_inner());
        Ok(open.entry(rules).or_insert(tb).clone())
    }

    /// Forgets every tablebase whose files changed on disk, so that the next
    /// request opens them afresh; requests under way finish on the old ones.
    fn forget_changed(&self) {
        let changed: Vec<Rules> = self
            .read()
            .iter()
            .filter(|(_, tb)| tb.changed_on_disk())
            .map(|(rules, _)| *rules)
            .collect();
        if !changed.is_empty() {
            let mut open = self.0.write().unwrap_or_else(|e| e.into_inner());
            for rules in changed {
                open.remove(&rules);
            }
        }
    }

    /// The map of open tablebases; a panicking request cannot leave it
    /// half-updated (every change is one insert or removal), so poisoning
    /// is ignored.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<Rules, Arc<Tablebase<K>>>> {
        self.0.read().unwrap_or_else(|e| e.into_inner())
    }
}

impl Shared {
    /// The shared state of a server of the tables under `root`, held as
    /// an absolute path: the paths in its errors are then all absolute,
    /// and [`served_paths`] can find them.
    fn new(root: PathBuf) -> Shared {
        let root = std::path::absolute(&root).unwrap_or(root);
        let quoted = serde_json::to_string(&root.to_string_lossy()).expect("a string serializes");
        Shared {
            root_in_json: quoted[1..quoted.len() - 1].to_string(),
            root,
            open: Opened::new(),
            depths: Opened::new(),
            searches: Semaphore::new(CONCURRENT_SEARCHES),
        }
    }

    /// The even tablebase of `rules`, opened on first use ([`Opened`]).
    fn tablebase(&self, rules: Rules) -> Result<Arc<Tablebase>, ApiError> {
        Ok(self.open.get(&self.root, rules, false)?)
    }

    /// The depth tables beside the even tables `tb`, if any level has
    /// one. Those of a rule set with even tables are kept open even when
    /// there are none, so that a request does not look for them on disk
    /// every time.
    fn depths(&self, tb: &Tablebase) -> Option<Arc<Tablebase<Depth>>> {
        tb.max_level()?;
        let depths = self.depths.get(&self.root, *tb.rules(), true).ok()?;
        (!depths.levels().is_empty()).then_some(depths)
    }

    /// Forgets every tablebase whose files changed on disk.
    fn forget_changed(&self) {
        self.open.forget_changed();
        self.depths.forget_changed();
    }
}

/// The API over the tables under `root`, without the file watching and
/// the connection limits of [`serve`]: for tests and fuzz targets that call
/// it in-process.
pub fn app(root: PathBuf) -> Router {
    router(Arc::new(Shared::new(root)))
}

/// The API over the tables `shared` holds.
fn router(shared: Arc<Shared>) -> Router {
    routes()
        .into_iter()
        .fold(Router::new(), |router, route| {
            router.route(route.path, route.handler)
        })
        .fallback(unknown_route)
        .method_not_allowed_fallback(wrong_method)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(middleware::from_fn_with_state(shared.clone(), served_paths))
        .layer(middleware::from_fn(within_limits))
        .with_state(shared)
}

/// One route of the API: a method, a path in axum's syntax and its
/// handler.
struct Route {
    method: &'static str,
    path: &'static str,
    handler: MethodRouter<Arc<Shared>>,
}

/// Every route, in one list that the router is built from and
/// [`endpoints`] reads, so that the test holding the OpenAPI document to
/// the routes sees every route the server answers.
fn routes() -> Vec<Route> {
    fn get_route<H: Handler<T, Arc<Shared>>, T: 'static>(path: &'static str, h: H) -> Route {
        Route {
            method: "get",
            path,
            handler: get(h),
        }
    }
    fn post_route<H: Handler<T, Arc<Shared>>, T: 'static>(path: &'static str, h: H) -> Route {
        Route {
            method: "post",
            path,
            handler: post(h),
        }
    }
    vec![
        get_route("/health", health),
        get_route("/openapi.json", openapi),
        get_route("/v1/tables", tables),
        get_route("/v1/{rules}/{pits}/position/{*notation}", position),
        get_route("/v1/{rules}/{pits}/levels", levels),
        post_route("/v1/analyze", analyze),
        post_route("/v1/play", play),
        get_route("/", || web_file("text/html; charset=utf-8", INDEX_HTML)),
        get_route("/app.js", || {
            web_file("text/javascript; charset=utf-8", APP_JS)
        }),
        get_route("/style.css", || {
            web_file("text/css; charset=utf-8", STYLE_CSS)
        }),
    ]
}

/// Every route the server answers, as its method and its path as OpenAPI
/// writes it (`{notation}` for axum's catch-all `{*notation}`): what the
/// OpenAPI document must describe.
pub fn endpoints() -> Vec<(&'static str, String)> {
    routes()
        .into_iter()
        .map(|route| (route.method, route.path.replace("{*", "{")))
        .collect()
}

/// The OpenAPI document of this API, written by hand beside the guide
/// and served as it is; a test checks it against the routes and the real
/// answers.
const OPENAPI_JSON: &str = include_str!("../docs/openapi.json");

/// `GET /openapi.json`.
async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI_JSON).into_response()
}

/// What stands for the table directory in answers.
const SERVED_DIRECTORY: &str = "the served table directory";

/// Answers name a table by its place in the table directory, never by the
/// server's own path: where the server keeps its files is its business,
/// and means nothing on the client's machine. Error texts come from the
/// library, which names files as opened, so the root is taken out of every
/// JSON answer that mentions it.
async fn served_paths(
    State(shared): State<Arc<Shared>>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> Response {
    let response = next.run(request).await;
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(body) = body.collect().await.map(|b| b.to_bytes()) else {
        return ApiError::internal("the answer could not be read back").into_response();
    };
    let root = &shared.root_in_json;
    let text = String::from_utf8_lossy(&body);
    if root.is_empty() || !text.contains(root) {
        return Response::from_parts(parts, axum::body::Body::from(body));
    }
    let text = text
        .replace(&format!("{root}/"), "")
        .replace(root, SERVED_DIRECTORY);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, axum::body::Body::from(text))
}

/// Connections served at once; more wait to be accepted.
pub const MAX_CONNECTIONS: usize = 512;

/// Connections served at once from one client address: one client cannot
/// hold every slot (more of its connections are closed as they come).
pub const MAX_CONNECTIONS_PER_CLIENT: usize = 64;

/// Longest time for a request's body to arrive, whole: a client that
/// trickles its body is answered 408 and let go.
pub const BODY_TIME: Duration = Duration::from_secs(10);

/// Longest wait for a request's headers, on a new connection or an idle
/// kept-alive one: a client that sends nothing is let go.
pub const HEADER_TIME: Duration = Duration::from_secs(10);

/// Longest time for a whole request, its body read and answered included
/// (a game-state analysis takes at most [`ANALYZE_TIME`] and the wait for
/// a search slot).
pub const REQUEST_TIME: Duration = Duration::from_secs(60);

/// How often the tables' files are checked for changes.
pub const REFRESH_EVERY: Duration = Duration::from_secs(1);

/// A declared body up to this size over [`MAX_BODY`] is read and dropped
/// before the 413 goes out, so that a client still sending it reads the
/// answer rather than a broken pipe; a larger one is refused at once.
pub const DRAIN_LIMIT: u64 = 8 * MAX_BODY as u64;

/// A request too large by its `Content-Length` is refused before its body
/// reaches a handler, its body must arrive within [`BODY_TIME`], and no
/// request runs longer than [`REQUEST_TIME`].
async fn within_limits(request: axum::extract::Request, next: middleware::Next) -> Response {
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let too_large = || ApiError::too_large(format!("request body over {MAX_BODY} bytes"));
    let work = async {
        match declared {
            Some(len) if len > DRAIN_LIMIT => too_large().into_response(),
            Some(len) if len > MAX_BODY as u64 => {
                drain(request.into_body()).await;
                too_large().into_response()
            }
            _ => match received_within(request, BODY_TIME).await {
                Ok(request) => next.run(request).await,
                Err(response) => response,
            },
        }
    };
    match tokio::time::timeout(REQUEST_TIME, work).await {
        Ok(response) => response,
        Err(_) => ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "timeout",
            format!("the request took over {} s", REQUEST_TIME.as_secs()),
        )
        .into_response(),
    }
}

/// `request` with its body read whole (at most [`MAX_BODY`] bytes; a
/// larger one is left for the handler's limit to refuse), if it arrives
/// within `limit`; else the 408 that answers a client too slow.
async fn received_within(
    request: axum::extract::Request,
    limit: Duration,
) -> Result<axum::extract::Request, Response> {
    let (parts, body) = request.into_parts();
    let limited = http_body_util::Limited::new(body, MAX_BODY + 1);
    match tokio::time::timeout(limit, limited.collect()).await {
        Ok(Ok(collected)) => Ok(axum::extract::Request::from_parts(
            parts,
            axum::body::Body::from(collected.to_bytes()),
        )),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => {
            Err(ApiError::too_large(format!("request body over {MAX_BODY} bytes")).into_response())
        }
        // A body that breaks HTTP's framing (a chunk size that is not a
        // number): the client's fault, not a size.
        Ok(Err(e)) => {
            Err(ApiError::bad_request(format!("unreadable request body: {e}")).into_response())
        }
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "timeout",
            format!("the request body took over {} s to arrive", limit.as_secs()),
        )
        .into_response()),
    }
}

/// Reads a body to its end, keeping nothing.
async fn drain(mut body: axum::body::Body) {
    while let Some(Ok(_)) = body.frame().await {}
}

/// Serves the API on `listener` until the process ends. The caller binds
/// (and can print the address, e.g. after binding port 0). At most
/// [`MAX_CONNECTIONS`] connections are served at once,
/// [`MAX_CONNECTIONS_PER_CLIENT`] from one address, each must send its
/// request headers within [`HEADER_TIME`], and the tables' files are
/// checked every [`REFRESH_EVERY`]: a rule set whose files changed is
/// opened afresh by the next request.
pub async fn serve(listener: tokio::net::TcpListener, root: PathBuf) -> std::io::Result<()> {
    let shared = Arc::new(Shared::new(root));
    let watched = shared.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(REFRESH_EVERY).await;
            let shared = watched.clone();
            let _ = tokio::task::spawn_blocking(move || shared.forget_changed()).await;
        }
    });
    let service = TowerToHyperService::new(router(shared));
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let clients = Clients::default();
    loop {
        let permit = connections
            .clone()
            .acquire_owned()
            .await
            .expect("the connection semaphore is never closed");
        let (stream, held) = match listener.accept().await {
            Ok((stream, peer)) => match clients.admit(peer.ip()) {
                Some(held) => (stream, held),
                // Over its share: closed at once, the slot given back.
                None => continue,
            },
            // Out of file descriptors, a connection reset before it was
            // accepted, …: the listener itself still works.
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let service = service.clone();
        tokio::spawn(async move {
            let _permit = permit;
            let _held = held;
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIME)
                .serve_connection(TokioIo::new(stream), service);
            let _ = connection.await;
        });
    }
}

/// Connections served per client address.
#[derive(Clone, Default)]
struct Clients(Arc<std::sync::Mutex<HashMap<std::net::IpAddr, usize>>>);

/// One connection of a client, counted until it is dropped.
struct Held {
    clients: Clients,
    address: std::net::IpAddr,
}

impl Clients {
    /// A connection from `address`, unless that client has
    /// [`MAX_CONNECTIONS_PER_CLIENT`] already.
    fn admit(&self, address: std::net::IpAddr) -> Option<Held> {
        let mut counts = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let count = counts.entry(address).or_default();
        if *count >= MAX_CONNECTIONS_PER_CLIENT {
            return None;
        }
        *count += 1;
        Some(Held {
            clients: self.clone(),
            address,
        })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut counts = self.clients.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = counts.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.address);
            }
        }
    }
}

/// The web board's files, built into the binary so that `serve` needs
/// nothing beside the tables.
const INDEX_HTML: &str = include_str!("../web/index.html");
const APP_JS: &str = include_str!("../web/app.js");
const STYLE_CSS: &str = include_str!("../web/style.css");

/// One of the web board's files with its content type.
async fn web_file(content_type: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

async fn health() -> Json<JsonValue> {
    Json(json!({"status": "ok"}))
}

async fn unknown_route() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route")
}

async fn wrong_method() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "method not allowed on this route",
    )
}

/// Runs blocking work (table probes, searches) off the async workers; a
/// panic in it is a 500 for this request only.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ApiError::internal(format!("the request's worker failed: {e}")))?
}

/// `GET /v1/tables`.
async fn tables(State(shared): State<Arc<Shared>>) -> ApiResult {
    blocking(move || {
        // The server answers from even tables; forced ones are not listed.
        let listed = rule_sets(&shared.root)?
            .into_iter()
            .filter(|&(_, cycles)| cycles == Cycles::Even)
            .map(|(rules, _)| Ok(table_summary(&*shared.tablebase(rules)?)))
            .collect::<Result<Vec<_>, ApiError>>()?;
        Ok(Json(json!({"tables": listed})))
    })
    .await
}

/// One rule set's entry in `/v1/tables`; a level that fails to open is
/// reported in place (the rest still serve).
fn table_summary(tb: &Tablebase) -> JsonValue {
    let rules = tb.rules();
    let mut summary = json!({
        "id": rules.id(),
        "rules": rules.variant().name(),
        "pits": rules.pits(),
        "empty_capture": rules.empty_capture(),
        "max_level": tb.max_level(),
        "levels": tb.levels(),
    });
    let (mut positions, mut bytes) = (0u64, 0u64);
    for &n in tb.levels() {
        match tb.level(n) {
            Ok(table) => {
                positions += table.header().positions;
                bytes += table.bytes();
            }
            Err(mancala_probe::Error::OutOfRange { .. }) => break,
            Err(e) => {
                summary["error"] = e.to_string().into();
                break;
            }
        }
    }
    summary["positions"] = positions.into();
    summary["bytes"] = bytes.into();
    summary
}

/// Query parameters of the position endpoint.
#[derive(Deserialize)]
struct PositionQuery {
    empty_capture: Option<bool>,
}

/// `GET /v1/{rules}/{pits}/position/{notation}`.
async fn position(
    State(shared): State<Arc<Shared>>,
    path: Result<Path<(String, String, String)>, PathRejection>,
    query: Result<Query<PositionQuery>, QueryRejection>,
) -> ApiResult {
    let Path((variant, pits, notation)) = path?;
    let Query(query) = query?;
    let pits: usize = pits
        .parse()
        .map_err(|_| ApiError::bad_request(format!("'{pits}' is not a pit count")))?;
    let rules = parse_rules(&variant, pits, query.empty_capture)?;
    let tb = shared.tablebase(rules)?;
    let depths = shared.depths(&tb);
    blocking(move || {
        let analysed = answer_one(&*tb, depths.as_deref(), (0, 0), &notation)?;
        Ok(Json(to_value(json::position(&analysed))))
    })
    .await
}

/// Query parameters of the levels endpoint.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LevelsQuery {
    empty_capture: Option<bool>,
    cycles: Option<String>,
}

/// `GET /v1/{rules}/{pits}/levels`: what each level's header says. Even
/// tables are read through the tablebase the other routes share; forced
/// ones, which no other route reads, are opened for the request.
async fn levels(
    State(shared): State<Arc<Shared>>,
    path: Result<Path<(String, String)>, PathRejection>,
    query: Result<Query<LevelsQuery>, QueryRejection>,
) -> ApiResult {
    let Path((variant, pits)) = path?;
    let Query(query) = query?;
    let pits: usize = pits
        .parse()
        .map_err(|_| ApiError::bad_request(format!("'{pits}' is not a pit count")))?;
    let rules = parse_rules(&variant, pits, query.empty_capture)?;
    let cycles = match query.cycles.as_deref() {
        None => Cycles::Even,
        Some(name) => Cycles::from_name(name)?,
    };
    blocking(move || {
        let levels = match cycles {
            Cycles::Even => level_summaries(&*shared.tablebase(rules)?)?,
            Cycles::Forced => level_summaries(&Tablebase::<Forced>::open_with(
                &shared.root,
                rules,
                0,
                Access::Read,
            )?)?,
        };
        Ok(Json(json!({
            "id": rules.id(),
            "rules": rules.variant().name(),
            "pits": rules.pits(),
            "empty_capture": rules.empty_capture(),
            "cycles": cycles.name(),
            "levels": levels,
        })))
    })
    .await
}

/// Every level of `tb` as [`LevelSummary::json`]; no levels is a 404.
fn level_summaries<K: TableKind>(tb: &Tablebase<K>) -> Result<Vec<JsonValue>, ApiError> {
    if tb.max_level().is_none() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "out_of_range",
            format!("no {} tables of {} here", K::CYCLES.name(), tb.rules().id()),
        ));
    }
    tb.levels()
        .iter()
        .map(|&n| Ok(LevelSummary::of(tb.level(n)?).json()))
        .collect()
}

/// The rule set named by a request; `empty_capture` is a Kalah option, and
/// asking for it elsewhere is an error rather than silently ignored.
fn parse_rules(variant: &str, pits: usize, empty_capture: Option<bool>) -> Result<Rules, ApiError> {
    let variant = Variant::from_name(variant)?;
    if empty_capture == Some(false) && variant != Variant::Kalah {
        return Err(ApiError::bad_request(format!(
            "empty_capture=false is a kalah option, not one of {variant}"
        )));
    }
    Ok(Rules::new(variant, pits)?.with_empty_capture(empty_capture.unwrap_or(true)))
}

/// A typed answer as a JSON value.
fn to_value(value: impl serde::Serialize) -> JsonValue {
    serde_json::to_value(value).expect("plain data serializes")
}

/// The body of `POST /v1/analyze`: positions or a game state.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnalyzeRequest {
    rules: String,
    pits: usize,
    empty_capture: Option<bool>,
    positions: Option<Vec<String>>,
    state: Option<StateRequest>,
}

/// A game state as sent: positions in notation, sides by name.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StateRequest {
    position: String,
    to_move: String,
    #[serde(default)]
    stores: [u32; 2],
    #[serde(default)]
    history: Vec<HistoryEntry>,
}

/// An earlier position of the game with the player who was to move.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HistoryEntry {
    position: String,
    to_move: String,
}

/// `POST /v1/analyze`.
async fn analyze(
    State(shared): State<Arc<Shared>>,
    body: Result<Bytes, BytesRejection>,
) -> ApiResult {
    let request: AnalyzeRequest = serde_json::from_slice(&body?)
        .map_err(|e| ApiError::bad_request(format!("bad JSON body: {e}")))?;
    let rules = parse_rules(&request.rules, request.pits, request.empty_capture)?;
    let tb = shared.tablebase(rules)?;
    match (request.positions, request.state) {
        (Some(positions), None) => {
            if positions.len() > MAX_BATCH {
                return Err(ApiError::too_large(format!(
                    "{} positions in one batch, at most {MAX_BATCH}",
                    positions.len()
                )));
            }
            let depths = shared.depths(&tb);
            blocking(move || analyze_batch(&tb, depths.as_deref(), &positions)).await
        }
        (None, Some(state)) => {
            let state = game_state(&rules, state)?;
            // Closed only when the server stops, which ends every request.
            let _slot = shared
                .searches
                .acquire()
                .await
                .map_err(|e| ApiError::internal(e.to_string()))?;
            let depths = shared.depths(&tb);
            blocking(move || analyze_state(&tb, depths.as_deref(), &state)).await
        }
        _ => Err(ApiError::bad_request(
            "the body needs exactly one of \"positions\" and \"state\"",
        )),
    }
}

/// Answers a batch: every readable, covered position in one batched probe
/// ([`answer_many`]), an error object in place of each other one.
fn analyze_batch(tb: &Tablebase, depths: Option<&Tablebase<Depth>>, texts: &[String]) -> ApiResult {
    let rules = *tb.rules();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    // Command-line advice means nothing to a client.
    let answers = answer_many(tb, depths, (0, 0), &texts)
        .into_iter()
        .map(|answer| answer.map_err(|f| Failure { hint: None, ..f }));
    let answers: Vec<_> = answers.collect();
    let results: Vec<json::ResultJson> = answers
        .iter()
        .zip(&texts)
        .map(|(answer, text)| json::result(answer, text))
        .collect();
    Ok(Json(json!({
        "rules": rules.variant().name(),
        "pits": rules.pits(),
        "results": to_value(results),
    })))
}

/// Reads a game state, checking what the engine's arithmetic relies on.
fn game_state(rules: &Rules, request: StateRequest) -> Result<GameState, ApiError> {
    if request.history.len() > MAX_HISTORY {
        return Err(ApiError::too_large(format!(
            "{} history positions, at most {MAX_HISTORY}",
            request.history.len()
        )));
    }
    if request.stores.iter().any(|&s| s > MAX_STORE) {
        return Err(ApiError::bad_request(format!(
            "a store over {MAX_STORE} stones"
        )));
    }
    let history = request
        .history
        .iter()
        .map(|h| {
            Ok((
                Side::from_name(&h.to_move)?,
                Position::parse(rules.pits(), &h.position)?,
            ))
        })
        .collect::<Result<Vec<_>, mancala_core::Error>>()?;
    Ok(GameState {
        position: Position::parse(rules.pits(), &request.position)?,
        to_move: Side::from_name(&request.to_move)?,
        stores: request.stores,
        history,
    })
}

/// The engine's analysis of a game state: table lookups within range, a
/// search bounded by [`SEARCH_TIME`] per searched position and
/// [`ANALYZE_TIME`] in all above it.
fn analyze_state(
    tb: &Tablebase,
    depths: Option<&Tablebase<Depth>>,
    state: &GameState,
) -> ApiResult {
    let mut engine = Engine::with_tables(tb)
        .with_tt_bytes(SEARCH_TT_BYTES)
        .with_deadline(Instant::now() + ANALYZE_TIME)
        .with_limits(Limits {
            nodes: None,
            time: Some(SEARCH_TIME),
        });
    if let Some(depths) = depths {
        engine = engine.with_depths(depths);
    }
    let analysis = engine.analyze(state)?;
    let mut answer = json::analysis(&analysis);
    if let Some(depths) = depths.filter(|_| engine.depths_cover(&state.position)) {
        add_state_depths(&mut answer, tb, depths, &state.position)?;
    }
    answer["end"] = json::end(state.end(tb.rules()));
    answer["rules"] = tb.rules().variant().name().into();
    answer["pits"] = tb.rules().pits().into();
    answer["position"] = state.position.to_string().into();
    answer["stores"] = json!(state.stores);
    answer["tables_up_to"] = tb.max_level().into();
    Ok(Json(answer))
}

/// Adds to an analysis of `pos` the depth to conversion of the position
/// (`"depth"`, `null` where it has none) and of each move (`"depth"` on
/// each of `"moves"`: the plies to conversion through it), from depth
/// tables that cover it.
fn add_state_depths(
    answer: &mut serde_json::Value,
    tb: &Tablebase,
    depths: &Tablebase<Depth>,
    pos: &Position,
) -> Result<(), ApiError> {
    let found = Depths::of(depths, tb, pos)?;
    answer["depth"] = found.position.into();
    // The analysis lists the legal moves in pit order, as the rules give
    // them.
    if let Some(moves) = answer["moves"].as_array_mut() {
        for (shown, depth) in moves.iter_mut().zip(found.moves) {
            shown["depth"] = depth.into();
        }
    }
    Ok(())
}

/// The body of `POST /v1/play`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlayRequest {
    rules: String,
    pits: usize,
    empty_capture: Option<bool>,
    state: StateRequest,
    /// The pit letter of the mover's row to empty.
    #[serde(rename = "move")]
    pit: String,
}

/// `POST /v1/play`: one move on a game state. An illegal move, or a move in
/// a game that is over, is a 400; nothing here needs the tables.
async fn play(body: Result<Bytes, BytesRejection>) -> ApiResult {
    let request: PlayRequest = serde_json::from_slice(&body?)
        .map_err(|e| ApiError::bad_request(format!("bad JSON body: {e}")))?;
    let rules = parse_rules(&request.rules, request.pits, request.empty_capture)?;
    let pit = parse_move(&rules, &request.pit)?;
    let state = game_state(&rules, request.state)?;
    let (next, sowing) = state.play_traced(&rules, pit)?;
    Ok(Json(json!({
        "rules": rules.variant().name(),
        "pits": rules.pits(),
        "move": request.pit.trim(),
        "mover": state.to_move.name(),
        "sowing": json::sowing(&rules, state.to_move, &sowing),
        "state": json::state(&next),
        "end": json::end(next.end(&rules)),
    })))
}
