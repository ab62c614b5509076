//! The mancala-tb table file format: one file per rule set, kind and level.
//!
//! The byte layout, the codec and the version policy are documented once,
//! in `docs/FORMAT.md`; this crate is its implementation:
//!
//! - [`Header`]: what a file says about itself, typed and checked;
//! - [`Encoding`]: what an even table's entries stand for ([`Full`],
//!   [`Compact`]), and how a reader gets the values back;
//! - [`TableFile`] and [`Table`]: a mapped, validated file, typed by its
//!   kind ([`Even`], [`Forced`], [`Depth`]), and [`depth_of`] and
//!   [`forced_opponent_depth`]: a position's depth from a depth table and the
//!   values;
//! - [`Levels`] and [`Scratch`]: decoded levels held for random access,
//!   in memory or mapped, by rank or flipped ([`Order`]);
//! - the directory layout ([`tables_dir`], [`level_file_name`], …).
//!
//! The writer's plumbing (the rANS model's counts, coding a level and
//! writing it atomically, the file's framing), which only the generator
//! and the VU tools use, is exported hidden from this documentation.
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

pub use depth::{depth_of, forced_opponent_depth};
pub use encoding::{Compact, ContextModel, Encoding, EntryReader, Full, Window};
pub use error::{FormatError, TableId};
pub use file::{Access, Table, TableFile};
pub use header::Header;
pub use kind::{Depth, Even, Forced, KindId, Plies, Realized, StoredDepth, Stores, TableKind};
pub use layout::{
    depth_file_name, depth_path, dir_name, level_file_name, level_files, level_path,
    levels_available, rule_sets, table_path, tables_dir,
};
pub use levels::{Levels, Scratch};
pub use order::{Order, RowRank, Rows};

/// The writer's plumbing, for the generator (`mancala-gen`), the VU tools
/// and the tests: coding, framing and writing a level, the model's counts,
/// and the helpers a build holds its levels with.
#[doc(hidden)]
pub use {
    codec::{Contexts, ModelCounts, Uniform},
    depth::stores_depth,
    encoding::{free_entries, unreachable_by_moves, ChosenEntries, SolvedValues},
    file::open_regular,
    header::{histogram, END_MARKER, MAGIC, MAX_BLOCK_SIZE},
    huge_pages::filled_on_huge_pages,
    kind::symbols_per_position,
    layout::levels_present,
    levels::{new_mapped_file, prefetch, MAPPED_MIN_POSITIONS},
    order::flip_gathered_bytes,
    write::{
        encode_blocks, table_head, table_trailer, temporary_path, temporary_path_of, write_level,
        BlockFrame, EncodedTable, TEMPORARY_SUFFIX,
    },
};
