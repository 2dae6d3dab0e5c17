package tests

import (
	"testing"

	"example.com/godemo/stats"
)

func TestOddLength(t *testing.T) {
	if got, _ := stats.Median([]float64{3, 1, 2}); got != 2 {
		t.Fatalf("Median = %v, want 2", got)
	}
}

func TestEvenLengthAveragesTheMiddlePair(t *testing.T) {
	if got, _ := stats.Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Fatalf("Median = %v, want 2.5", got)
	}
}

func TestSingleValue(t *testing.T) {
	if got, _ := stats.Median([]float64{7}); got != 7 {
		t.Fatalf("Median = %v, want 7", got)
	}
}

func TestEmptyIsAnError(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []float64
	}{{"nil", nil}, {"empty", []float64{}}} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := stats.Median(c.in); err != stats.ErrEmpty {
				t.Fatalf("err = %v, want ErrEmpty", err)
			}
		})
	}
}
