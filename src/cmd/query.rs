//! `mancala-tb query`: the value and move values of positions, from the
//! command line or one per line from stdin.

use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use mancala_core::Cycles;
use mancala_probe::{Even, Forced, Tablebase, DEFAULT_CACHE_BYTES};
use rayon::prelude::*;

use crate::answer::{answer_many, Analysed, Answering, Failure};
use crate::args::{parse_captured, parse_cycles, RulesArgs};
use crate::json;

#[derive(Args)]
pub struct QueryArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Table directory.
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
    /// One JSON object per position instead of a board picture.
    #[arg(long)]
    json: bool,
    /// Memory for decoded table blocks, in MiB (an LRU cache).
    #[arg(long, default_value_t = DEFAULT_CACHE_BYTES >> 20)]
    cache_mib: usize,
    /// Which tables to read: `even` values or `forced` bounds.
    #[arg(long, default_value = "even", value_parser = parse_cycles)]
    cycles: Cycles,
    /// Forced tables: stones already captured by the mover and by the
    /// opponent, for the verdict.
    #[arg(long, default_value = "0,0", value_parser = parse_captured)]
    captured: (u32, u32),
    /// Positions such as 4,4,4,0,0,0/0,0,0,0,0,0 (mover's row first); `-`
    /// reads one position per line from stdin.
    #[arg(required = true)]
    positions: Vec<String>,
}

pub fn run(args: QueryArgs) -> Result<bool> {
    match args.cycles {
        Cycles::Even => query::<Even>(&args),
        Cycles::Forced => query::<Forced>(&args),
    }
}

fn query<K: Answering>(args: &QueryArgs) -> Result<bool> {
    let rules = args.rules.rules()?;
    let tb = Tablebase::<K>::open_with_cache(&args.dir, rules, args.cache_mib << 20)?;
    let query = Query {
        tb: &tb,
        captured: args.captured,
    };
    if let [text] = args.positions.as_slice() {
        if text != "-" && !args.json {
            // A lone position: its failure is the command's error.
            let mut answers = answer_many(&tb, args.captured, &[text]);
            match answers.pop().expect("one answer per position") {
                Ok(analysed) => out!("{}", analysed.to_text()),
                Err(failure) => anyhow::bail!(failure.message),
            }
            return Ok(true);
        }
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut all_ok = true;
    for arg in &args.positions {
        all_ok &= match (arg.as_str(), args.json) {
            ("-", true) => query.answer_stream(Format::Json, &mut out)?,
            ("-", false) => query.answer_stream(Format::Line, &mut out)?,
            (text, true) => query.write_answers(Format::Json, &[text], &mut out)?,
            (text, false) => query.write_answers(Format::Board, &[text], &mut out)?,
        };
    }
    out.flush()?;
    Ok(all_ok)
}

/// What a query reads and the stones already captured (for forced verdicts).
struct Query<'a, K: Answering> {
    tb: &'a Tablebase<K>,
    captured: (u32, u32),
}

/// How a query answer is printed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    /// Board picture, value and moves (positions given as arguments).
    Board,
    /// One line per position (positions read from stdin).
    Line,
    /// One JSON object per line.
    Json,
}

/// Most stdin lines answered in one round. Large, so that each table block
/// a round needs is decoded once for many positions.
const QUERY_BATCH: usize = 1 << 20;
/// Bytes asked of stdin per read.
const READ_BYTES: usize = 1 << 20;
/// Pieces the reader may be ahead of the answers.
const PIECES_IN_FLIGHT: usize = 64;
/// A piece this large means input comes in bulk (a full pipe buffer is
/// 64 KiB): more is probably on its way.
const BULK_BYTES: usize = 16 << 10;
/// How long a round waits for more bulk input before it is answered.
const BULK_WAIT: Duration = Duration::from_millis(10);

impl<K: Answering> Query<'_, K> {
    /// Answers positions in parallel and writes the answers in input order,
    /// an error line for each bad one. Returns whether all were answered.
    fn write_answers(&self, format: Format, texts: &[&str], out: &mut impl Write) -> Result<bool> {
        /// Answers formatted per unit of parallel work, into one string.
        const CHUNK: usize = 4096;
        let analyses = answer_many(self.tb, self.captured, texts);
        let pieces: Vec<(String, bool)> = analyses
            .par_chunks(CHUNK)
            .zip(texts.par_chunks(CHUNK))
            .map(|(analyses, texts)| {
                let mut piece = String::with_capacity(analyses.len() * 48);
                let mut all_ok = true;
                for (analysis, text) in analyses.iter().zip(texts) {
                    all_ok &= analysis.is_ok();
                    write_answer(format, analysis, text, &mut piece);
                }
                (piece, all_ok)
            })
            .collect();
        for (piece, _) in &pieces {
            out.write_all(piece.as_bytes())?;
        }
        Ok(pieces.iter().all(|(_, ok)| *ok))
    }

    /// Answers stdin, one line per position. A reader thread passes on the
    /// complete lines of every read as one piece. A round gathers pieces
    /// while they come in bulk (a piece of at least [`BULK_BYTES`] followed
    /// within [`BULK_WAIT`], as from a file or a fast pipe), up to
    /// [`QUERY_BATCH`] lines, then answers them in parallel and flushes:
    /// bulk input is scored in a few large rounds, in which each table
    /// block is decoded once, while a program that writes a line and waits
    /// gets its answer at once.
    fn answer_stream(&self, format: Format, out: &mut impl Write) -> Result<bool> {
        let (pieces, received) = sync_channel::<Result<String>>(PIECES_IN_FLIGHT);
        std::thread::spawn(move || {
            let input = std::io::BufReader::with_capacity(READ_BYTES, std::io::stdin().lock());
            read_pieces(input, pieces)
        });
        let mut all_ok = true;
        while let Ok(first) = received.recv() {
            let mut text = first?;
            let mut last_len = text.len();
            while last_len >= BULK_BYTES && text.len() < QUERY_BATCH * 24 {
                let Ok(piece) = received.recv_timeout(BULK_WAIT) else {
                    break;
                };
                let piece = piece?;
                text.push_str(&piece);
                last_len = piece.len();
            }
            let lines: Vec<&str> = text
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty())
                .collect();
            for round in lines.chunks(QUERY_BATCH) {
                all_ok &= self.write_answers(format, round, out)?;
            }
            out.flush()?;
        }
        Ok(all_ok)
    }
}

/// Appends one answer, or the failure for `text`, as a line (a board
/// picture and a blank line in the board format).
fn write_answer(
    format: Format,
    analysis: &Result<Analysed, Failure>,
    text: &str,
    out: &mut String,
) {
    match (analysis, format) {
        (Ok(a), Format::Json) => out.push_str(&json::analysed(a)),
        (Ok(a), Format::Line) => a.write_line(out),
        (Ok(a), Format::Board) => {
            out.push_str(&a.to_text());
            out.push('\n'); // a blank line between boards
        }
        (Err(failure), Format::Json) => out.push_str(&json::failure(failure, Some(text))),
        (Err(failure), _) => {
            out.push_str(text);
            out.push_str(" error: ");
            out.push_str(&failure.message);
        }
    }
    out.push('\n');
}

/// Sends the complete lines of each read from `input` as one piece (a line
/// cut by the end of a read waits for the rest), then a last unterminated
/// line, if any. Stops at the first error, which it sends on.
fn read_pieces(mut input: impl BufRead, pieces: SyncSender<Result<String>>) {
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let read = match input.fill_buf() {
            Ok([]) => break,
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = pieces.send(Err(anyhow::Error::from(e).context("cannot read stdin")));
                return;
            }
        };
        let taken = read.len();
        pending.extend_from_slice(read);
        input.consume(taken);
        if let Some(end) = pending.iter().rposition(|&b| b == b'\n') {
            let rest = pending.split_off(end + 1);
            let complete = std::mem::replace(&mut pending, rest);
            if !send_piece(&pieces, complete) {
                return;
            }
        }
    }
    if !pending.is_empty() {
        send_piece(&pieces, pending);
    }
}

/// Sends `bytes` as a piece of text (an error if they are not UTF-8);
/// whether the receiver still listens.
fn send_piece(pieces: &SyncSender<Result<String>>, bytes: Vec<u8>) -> bool {
    let piece = String::from_utf8(bytes).context("cannot read stdin: not UTF-8 text");
    let failed = piece.is_err();
    pieces.send(piece).is_ok() && !failed
}
