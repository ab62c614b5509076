//! Numpy batches of positions: an `(N, 2P)` integer array of any integer
//! type read in place (no copy to a common type), each row made a position
//! on every core with the GIL released.

use numpy::ndarray::ArrayView2;
use numpy::{PyReadonlyArray2, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use rayon::prelude::*;

use mancala_core::{Position, MAX_PITS};

use crate::errors::NotationError;

/// Reads `array` as positions of `pits` pits a side and calls `probe` with
/// them, without the GIL (for the reading too).
pub(crate) fn with_positions<R: Send>(
    array: &Bound<'_, PyAny>,
    pits: usize,
    probe: impl FnOnce(&[Position]) -> PyResult<R> + Send,
) -> PyResult<R> {
    macro_rules! as_each {
        ($($t:ty),*) => {$(
            if let Ok(a) = array.extract::<PyReadonlyArray2<'_, $t>>() {
                let view = a.as_array();
                check_width(view.ncols(), pits)?;
                return array.py().detach(|| {
                    let positions = positions_of(view, pits).map_err(NotationError::new_err)?;
                    probe(&positions)
                });
            }
        )*};
    }
    as_each!(i64, u8, i8, i16, u16, i32, u32, u64);
    let what = match array.extract::<Bound<'_, PyUntypedArray>>() {
        Ok(a) => format!("an array of shape {:?} and dtype {}", a.shape(), a.dtype()),
        Err(_) => format!("a {}", array.get_type().name()?),
    };
    Err(PyTypeError::new_err(format!(
        "positions are a 2-dimensional numpy array of integers, one position a row; got {what}"
    )))
}

/// A batch's rows must be the `2P` counts of a position.
fn check_width(columns: usize, pits: usize) -> PyResult<()> {
    if columns == 2 * pits {
        return Ok(());
    }
    Err(NotationError::new_err(format!(
        "positions of {pits} pits a side are rows of {} counts, not {columns}",
        2 * pits
    )))
}

/// Every row of `view` as a position, on every core; the first bad row is
/// named in the error.
fn positions_of<T>(view: ArrayView2<'_, T>, pits: usize) -> Result<Vec<Position>, String>
where
    T: Copy + Into<i128> + Sync,
{
    (0..view.nrows())
        .into_par_iter()
        .map(|i| {
            let mut counts = [0u32; 2 * MAX_PITS];
            for (count, &c) in counts.iter_mut().zip(view.row(i)) {
                let c: i128 = c.into();
                *count =
                    u32::try_from(c).map_err(|_| format!("row {i}: a pit holds {c} stones"))?;
            }
            Position::from_counts(pits, &counts[..2 * pits]).map_err(|e| format!("row {i}: {e}"))
        })
        .collect()
}
