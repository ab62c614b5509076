//! `mancala-tb serve`: the tables over HTTP/JSON, and the web board.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

#[derive(Args)]
pub struct ServeArgs {
    /// Address to listen on, `HOST:PORT` (a host name or an IP address;
    /// port 0 picks a free port; the address bound is printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: String,
    /// Table directory (every rule set under it is served).
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
}

/// Binds, prints `listening on http://ADDR` (the real port when given port
/// 0, so scripts and tests can find the server) and serves until killed.
pub fn run(args: ServeArgs) -> Result<bool> {
    if args.dir.exists() && !args.dir.is_dir() {
        anyhow::bail!(
            "{}: not a directory (give --dir a table directory)",
            args.dir.display()
        );
    }
    if !args.dir.is_dir() {
        anyhow::bail!(
            "{}: no such table directory (build tables into it first, or give --dir)",
            args.dir.display()
        );
    }
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.addr.as_str())
            .await
            .with_context(|| format!("cannot listen on {}", args.addr))?;
        out!("listening on http://{}", listener.local_addr()?);
        crate::server::serve(listener, args.dir).await?;
        Ok(true)
    })
}
