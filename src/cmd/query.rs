//! `mancala-tb query`: the value and move values of positions, from the
//! command line or one per line from stdin.

use std::io::{BufRead, BufWriter, Write};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use mancala_core::{echoed, Cycles};
use mancala_probe::{Depth, Even, Forced, Tablebase, DEFAULT_CACHE_BYTES};
use rayon::prelude::*;

use crate::answer::{answer_many, open_depths, Analysed, Answering, Failure};
use crate::args::{parse_captured, parse_cycles, parse_mib, RulesArgs};
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
    /// Memory for decoded table blocks, in MiB (an LRU cache, filled only
    /// as blocks are read).
    #[arg(long = "cache-mib", value_name = "MIB", default_value = DEFAULT_CACHE_MIB, value_parser = parse_mib)]
    cache_bytes: usize,
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
    let tb = Tablebase::<K>::open_with_cache(&args.dir, rules, args.cache_bytes)?;
    let depths = open_depths::<K>(&args.dir, rules, args.cache_bytes);
    let query = Query {
        tb: &tb,
        depths: depths.as_ref(),
        captured: args.captured,
    };
    if let [text] = args.positions.as_slice() {
        if text != "-" && !args.json {
            // A lone position: its failure is the command's error.
            let mut answers = answer_many(&tb, depths.as_ref(), args.captured, &[text]);
            match answers.pop().expect("one answer per position") {
                Ok(analysed) => out!("{}", analysed.to_text()),
                Err(failure) => anyhow::bail!(failure.text()),
            }
            return Ok(true);
        }
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut all_ok = true;
    for arg in &args.positions {
        let line = [Line::Text(arg.as_str())];
        all_ok &= match (arg.as_str(), args.json) {
            ("-", true) => query.answer_stream(Format::Json, &mut out)?,
            ("-", false) => query.answer_stream(Format::Line, &mut out)?,
            (_, true) => query.write_answers(Format::Json, &line, &mut out)?,
            (_, false) => query.write_answers(Format::Board, &line, &mut out)?,
        };
    }
    out.flush()?;
    Ok(all_ok)
}

/// One line of input: a text to answer, or why it cannot be a position.
enum Line<'a> {
    /// A position's text (perhaps a malformed one).
    Text(&'a str),
    /// Not text, or nothing at all: shown as `shown`, answered by `failure`.
    Bad { shown: String, failure: Failure },
}

impl<'a> Line<'a> {
    /// The line `bytes` of stdin, without its line ending and surrounding
    /// white space.
    fn of(bytes: &'a [u8]) -> Line<'a> {
        if bytes.len() > MAX_LINE {
            return Line::overlong(bytes, bytes.len() as u64);
        }
        let bad = |message: &str| Line::Bad {
            shown: echoed(String::from_utf8_lossy(bytes).trim()).into_owned(),
            failure: Failure {
                kind: "notation",
                message: message.to_string(),
                hint: None,
            },
        };
        match std::str::from_utf8(bytes) {
            Ok(text) if text.trim().is_empty() => bad("bad position: an empty line"),
            Ok(text) => Line::Text(text.trim()),
            Err(_) => bad("bad position: not UTF-8 text"),
        }
    }

    /// A line of `len` bytes, longer than [`MAX_LINE`], that starts with
    /// `start`.
    fn overlong(start: &[u8], len: u64) -> Line<'a> {
        let start = &start[..start.len().min(MAX_LINE)];
        Line::Bad {
            shown: echoed(String::from_utf8_lossy(start).trim()).into_owned(),
            failure: Failure {
                kind: "too_long",
                message: format!(
                    "a line of {} bytes, longer than the {} allowed",
                    thousands(len),
                    thousands(MAX_LINE as u64)
                ),
                hint: None,
            },
        }
    }

    fn shown(&self) -> &str {
        match self {
            Line::Text(text) => text,
            Line::Bad { shown, .. } => shown,
        }
    }
}

/// What a query reads and the stones already captured (for forced verdicts).
struct Query<'a, K: Answering> {
    tb: &'a Tablebase<K>,
    /// The depth tables beside even tables, if there are any.
    depths: Option<&'a Tablebase<Depth<K>>>,
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

/// `--cache-mib` unless set: the library's default cache.
const DEFAULT_CACHE_MIB: &str = "256";
const _: () = assert!(DEFAULT_CACHE_BYTES == 256 << 20);

/// Most stdin lines answered in one round. Large, so that each table block
/// a round needs is decoded once for many positions.
const QUERY_BATCH: usize = 1 << 20;
/// Bytes asked of stdin per read.
const READ_BYTES: usize = 1 << 20;
/// The longest line read as a position (a position of the largest board
/// takes about a hundred bytes): a longer one is answered with an error,
/// and only its start is kept while the rest is read past.
const MAX_LINE: usize = 4096;
/// Pieces the reader may be ahead of the answers.
const PIECES_IN_FLIGHT: usize = 64;
/// A piece this large means input comes in bulk (a full pipe buffer is
/// 64 KiB): more is probably on its way.
const BULK_BYTES: usize = 16 << 10;
/// How long a round waits for more bulk input before it is answered.
const BULK_WAIT: Duration = Duration::from_millis(10);

impl<K: Answering> Query<'_, K> {
    /// Answers lines in parallel and writes one answer line per input line,
    /// in input order, an error line for each bad one. Returns whether all
    /// were answered.
    fn write_answers(&self, format: Format, lines: &[Line], out: &mut impl Write) -> Result<bool> {
        /// Answers formatted per unit of parallel work, into one string.
        const CHUNK: usize = 4096;
        let texts: Vec<&str> = lines
            .iter()
            .filter_map(|line| match line {
                Line::Text(text) => Some(*text),
                Line::Bad { .. } => None,
            })
            .collect();
        let mut answered = answer_many(self.tb, self.depths, self.captured, &texts).into_iter();
        let analyses: Vec<Result<Analysed, Failure>> = lines
            .iter()
            .map(|line| match line {
                Line::Text(_) => answered.next().expect("one answer per text"),
                Line::Bad { failure, .. } => Err(failure.clone()),
            })
            .collect();
        let pieces: Vec<(String, bool)> = analyses
            .par_chunks(CHUNK)
            .zip(lines.par_chunks(CHUNK))
            .map(|(analyses, lines)| {
                let mut piece = String::with_capacity(analyses.len() * 48);
                let mut all_ok = true;
                for (analysis, line) in analyses.iter().zip(lines) {
                    all_ok &= analysis.is_ok();
                    write_answer(format, analysis, line.shown(), &mut piece);
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
        let (pieces, received) = sync_channel::<Result<Piece>>(PIECES_IN_FLIGHT);
        std::thread::spawn(move || {
            let input = std::io::BufReader::with_capacity(READ_BYTES, std::io::stdin().lock());
            read_pieces(input, pieces)
        });
        let mut all_ok = true;
        while let Ok(first) = received.recv() {
            let mut bytes = match first? {
                Piece::Lines(bytes) => bytes,
                Piece::Overlong { start, len } => {
                    all_ok &= self.write_answers(format, &[Line::overlong(&start, len)], out)?;
                    continue;
                }
            };
            let mut last_len = bytes.len();
            let mut overlong = None;
            while last_len >= BULK_BYTES && bytes.len() < QUERY_BATCH * 24 {
                let Ok(piece) = received.recv_timeout(BULK_WAIT) else {
                    break;
                };
                match piece? {
                    Piece::Lines(piece) => {
                        bytes.extend_from_slice(&piece);
                        last_len = piece.len();
                    }
                    Piece::Overlong { start, len } => {
                        overlong = Some(Line::overlong(&start, len));
                        break;
                    }
                }
            }
            all_ok &= self.write_lines(format, &bytes, out)?;
            if let Some(line) = overlong {
                all_ok &= self.write_answers(format, &[line], out)?;
            }
            out.flush()?;
        }
        Ok(all_ok)
    }

    /// Answers the lines of `bytes`, one answer line each, in rounds of at
    /// most [`QUERY_BATCH`]. Every line gets its answer line, a blank or
    /// undecodable one an error line, so that answers stay aligned with
    /// their input.
    fn write_lines(&self, format: Format, bytes: &[u8], out: &mut impl Write) -> Result<bool> {
        if bytes.is_empty() {
            return Ok(true);
        }
        let text = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let lines: Vec<Line> = text.split(|&b| b == b'\n').map(Line::of).collect();
        let mut all_ok = true;
        for round in lines.chunks(QUERY_BATCH) {
            all_ok &= self.write_answers(format, round, out)?;
        }
        Ok(all_ok)
    }
}

/// Answers `bytes` as `query -` answers its input, one line out per line in
/// (JSON objects with `json`), into `out`; whether every line was answered.
/// What the command does with each round of its stdin, for tests and fuzz
/// targets.
pub fn answer_lines<K: Answering>(
    tb: &Tablebase<K>,
    captured: (u32, u32),
    json: bool,
    bytes: &[u8],
    out: &mut impl Write,
) -> Result<bool> {
    let format = if json { Format::Json } else { Format::Line };
    Query {
        tb,
        depths: None,
        captured,
    }
    .write_lines(format, bytes, out)
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
            out.push_str(&echoed(text));
            out.push_str(" error: ");
            out.push_str(&failure.text());
        }
    }
    out.push('\n');
}

/// What the reader thread passes on: complete lines, or a line too long
/// to be a position, of which only the start was kept.
enum Piece {
    Lines(Vec<u8>),
    Overlong { start: Vec<u8>, len: u64 },
}

/// Sends the complete lines of each read from `input` as one piece (a line
/// cut by the end of a read waits for the rest), then a last unterminated
/// line, if any. A line that grows past [`MAX_LINE`] is kept no further
/// and sent as [`Piece::Overlong`] when it ends. Each read is looked at
/// once, whatever the lines' lengths. Stops at the first error, which it
/// sends on.
fn read_pieces(mut input: impl BufRead, pieces: SyncSender<Result<Piece>>) {
    let mut pending = Unfinished::default();
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
        let sent = match read.iter().position(|&b| b == b'\n') {
            None => {
                pending.extend(read);
                Ok(())
            }
            Some(first) => {
                let last = read
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .expect("one at least");
                pending.extend(&read[..first]);
                let ended = std::mem::take(&mut pending);
                let mut lines = Vec::with_capacity(last - first + MAX_LINE);
                match ended.into_piece() {
                    Piece::Lines(line) => {
                        lines.extend_from_slice(&line);
                        lines.push(b'\n');
                    }
                    overlong => {
                        if pieces.send(Ok(overlong)).is_err() {
                            return;
                        }
                    }
                }
                lines.extend_from_slice(&read[first + 1..=last]);
                pending.extend(&read[last + 1..]);
                if lines.is_empty() {
                    Ok(())
                } else {
                    pieces.send(Ok(Piece::Lines(lines)))
                }
            }
        };
        input.consume(taken);
        if sent.is_err() {
            return;
        }
    }
    if pending.len > 0 {
        let _ = pieces.send(Ok(pending.into_piece()));
    }
}

/// The line being read: its first bytes (up to one past [`MAX_LINE`]) and
/// its length so far.
#[derive(Default)]
struct Unfinished {
    start: Vec<u8>,
    len: u64,
}

impl Unfinished {
    fn extend(&mut self, bytes: &[u8]) {
        let room = (MAX_LINE + 1).saturating_sub(self.start.len());
        self.start
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.len += bytes.len() as u64;
    }

    fn into_piece(self) -> Piece {
        if self.len > MAX_LINE as u64 {
            Piece::Overlong {
                start: self.start,
                len: self.len,
            }
        } else {
            Piece::Lines(self.start)
        }
    }
}

/// `n` with its thousands separated by commas.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}
