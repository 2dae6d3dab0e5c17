// Package stats is patchloop's Go example: one planted bug, Median returns the upper middle
// value for even-length input instead of the mean of the two middle values.
package stats

import (
	"errors"
	"sort"
)

// ErrEmpty is returned for an empty input.
var ErrEmpty = errors.New("stats: empty input")

// Median returns the median of values.
func Median(values []float64) (float64, error) {
	if len(values) == 0 {
		return 0, ErrEmpty
	}
	ordered := append([]float64(nil), values...)
	sort.Float64s(ordered)
	mid := len(ordered) / 2
	return ordered[mid], nil
}

// Mean returns the arithmetic mean of values.
func Mean(values []float64) (float64, error) {
	if len(values) == 0 {
		return 0, ErrEmpty
	}
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	return sum / float64(len(values)), nil
}
