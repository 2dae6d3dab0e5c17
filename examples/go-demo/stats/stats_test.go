package stats

import "testing"

func TestMeanOfThree(t *testing.T) {
	if got, _ := Mean([]float64{1, 2, 6}); got != 3 {
		t.Fatalf("Mean = %v, want 3", got)
	}
}
