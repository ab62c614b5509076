//! The VU layout's tests, in one binary.

mod godel;
