'use strict';

// The median of a non-empty array of numbers; throws on an empty one.
// Planted bug: for even-length input it returns the upper middle value instead of the mean of
// the two middle values.
function median(values) {
  if (values.length === 0) {
    throw new RangeError('median() of an empty array');
  }
  const ordered = [...values].sort((a, b) => a - b);
  const mid = Math.floor(ordered.length / 2);
  return ordered[mid];
}

function mean(values) {
  if (values.length === 0) {
    throw new RangeError('mean() of an empty array');
  }
  return values.reduce((a, b) => a + b, 0) / values.length;
}

module.exports = { median, mean };
