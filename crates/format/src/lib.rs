//! The mancala-tb table file format: one file per rule set, kind and level.
//!
//! The byte layout, the codec and the version policy are documented once,
//! in `docs/FORMAT.md`; this crate is its implementation:
//!
//! - [`Header`]: what a file says about itself, typed and checked;
//! - [`Model`] and [`ModelCounts`]: the order-1 rANS value model, fitted
//!   from counts that add up across workers;
//! - [`Encoding`] and [`ValueEncoding`]: what an even table's entries stand
//!   for ([`Full`], [`Compact`]), how a writer chooses them and a reader
//!   gets the values back;
//! - [`TableFile`] and [`Table`]: a mapped, validated file, typed by its
//!   kind ([`Even`], [`Forced`], [`Depth`]), and [`depth_of`] and
//!   [`forced_depths_of`]: a position's depth from a depth table and the
//!   values;
//! - [`EncodedTable`]: coding a level and writing it to any
//!   [`std::io::Write`], or atomically to a file;
//! - [`Levels`] and [`Scratch`]: decoded levels held for random access,
//!   in memory on huge pages ([`filled_on_huge_pages`]) or mapped, by rank
//!   or flipped ([`Order`]);
//! - the directory layout ([`tables_dir`], [`level_file_name`], …).
//!
//! Reading a table needs nothing but this crate and `mancala-core`: no
//! solver code.

#![warn(missing_docs)]

mod codec;
mod depth;
mod encoding;
mod error;
mod file;
mod header;
mod huge_pages;
mod kind;
mod layout;
mod levels;
mod order;
mod write;

pub use codec::{
    lower_free_values, Contexts, DecodeError, Decoder, Model, ModelCounts, StoredModel, Uniform,
    MAX_SYMBOLS, PROB_BITS, PROB_SCALE,
};
pub use depth::{depth_of, forced_depths_of, stores_depth, ForcedDepths};
pub use encoding::{
    free_entries, unreachable_by_moves, ChosenEntries, Compact, ContextModel, Encoding,
    EntryReader, Full, MoverContexts, Restoring, SolvedValues, ValueEncoding, Window, MOVER_CAP,
};
pub use error::{FormatError, TableId};
pub use file::{open_regular, Access, Table, TableFile};
pub use header::{
    histogram, Header, END_MARKER, FORMAT_VERSION, INDEX_SCHEME, MAGIC, MAX_BLOCK_SIZE,
};
pub use huge_pages::filled_on_huge_pages;
pub use kind::{
    symbols_per_position, Depth, Even, Forced, KindId, Plies, Realized, StoredDepth, Stores,
    TableKind,
};
pub use layout::{
    depth_file_name, depth_path, dir_name, level_file_name, level_files, level_path,
    levels_available, levels_present, parse_dir_name, rule_sets, table_path, tables_dir,
};
pub use levels::{new_mapped_file, prefetch, Levels, Scratch, MAPPED_MIN_POSITIONS};
pub use order::{flip_gathered_bytes, Order};
pub use write::{
    encode_blocks, table_head, table_trailer, temporary_path, temporary_path_of, write_level,
    BlockFrame, EncodedTable, TEMPORARY_SUFFIX,
};
