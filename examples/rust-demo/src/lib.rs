//! A toy crate with one planted bug (patchloop's Rust example): `median` returns the upper
//! middle value for even-length input instead of the mean of the two middle values.

/// The median of a non-empty slice, or `None` when it is empty.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut ordered = values.to_vec();
    ordered.sort_by(|a, b| a.total_cmp(b));
    let mid = ordered.len() / 2;
    Some(ordered[mid])
}

/// The arithmetic mean of a non-empty slice, or `None` when it is empty.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

#[cfg(test)]
mod tests {
    #[test]
    fn mean_of_three() {
        assert_eq!(super::mean(&[1.0, 2.0, 6.0]), Some(3.0));
    }
}
