//! Any bytes as the body of the server's POST endpoints, on real tables: an
//! answer or a client error, never a panic or a server error.
#![no_main]

use std::sync::OnceLock;

use axum::body::Body;
use axum::http::Request;
use libfuzzer_sys::fuzz_target;
use mancala_core::{Rules, Variant};
use mancala_gen::{build, BuildOptions, Quiet};
use tower::ServiceExt;

/// The server's routes on oware tables to 6 stones and kalah-4 to 8.
fn app() -> &'static axum::Router {
    static APP: OnceLock<axum::Router> = OnceLock::new();
    APP.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("mancala-tb-fuzz-h-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let oware = Rules::new(Variant::Oware, 6).unwrap();
        let kalah = Rules::new(Variant::Kalah, 4).unwrap();
        build(&BuildOptions::new(&dir, oware, 6), &Quiet).unwrap();
        build(&BuildOptions::new(&dir, kalah, 8), &Quiet).unwrap();
        mancala_tb::server::app(dir)
    })
}

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    for route in ["/v1/analyze", "/v1/play"] {
        let request = Request::post(route)
            .header("content-type", "application/json")
            .body(Body::from(data.to_vec()))
            .unwrap();
        let response = runtime().block_on(app().clone().oneshot(request)).unwrap();
        let status = response.status();
        assert!(
            status.is_success() || status.is_client_error(),
            "{route}: {status} for {:?}",
            String::from_utf8_lossy(data)
        );
    }
});
