package mathx_test

import (
	"testing"

	"example.com/gofast/mathx"
)

func TestAbsNegative(t *testing.T) {
	if got := mathx.Abs(-7); got != 7 {
		t.Errorf("Abs(-7) = %d, want 7", got)
	}
}

func TestAbsNonNegative(t *testing.T) {
	for _, x := range []int{0, 1, 42} {
		if got := mathx.Abs(x); got != x {
			t.Errorf("Abs(%d) = %d, want %d", x, got, x)
		}
	}
}
