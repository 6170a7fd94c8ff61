package humanize_test

import (
	"math"
	"math/big"
	"math/rand"
	"strconv"
	"testing"

	"github.com/dustin/go-humanize"
)

// grouped is an independent reference: the decimal digits of v with a comma before
// every group of three counted from the right.
func grouped(v int64) string {
	s := strconv.FormatInt(v, 10)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	out := []byte{}
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return sign + string(out)
}

func TestRefactorCommaTable(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want string
	}{
		{0, "0"}, {7, "7"}, {-7, "-7"}, {99, "99"}, {100, "100"}, {999, "999"},
		{-999, "-999"}, {1000, "1,000"}, {-1000, "-1,000"}, {1001, "1,001"},
		{10000, "10,000"}, {100000, "100,000"}, {999999, "999,999"},
		{1000000, "1,000,000"}, {-1234567, "-1,234,567"}, {1002003004, "1,002,003,004"},
		{math.MaxInt64, "9,223,372,036,854,775,807"},
		{math.MinInt64 + 1, "-9,223,372,036,854,775,807"},
		{math.MinInt64, "-9,223,372,036,854,775,808"},
	} {
		if got := humanize.Comma(c.in); got != c.want {
			t.Errorf("Comma(%d) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRefactorCommaSweep(t *testing.T) {
	rng := rand.New(rand.NewSource(20220320))
	check := func(v int64) {
		if got, want := humanize.Comma(v), grouped(v); got != want {
			t.Fatalf("Comma(%d) = %q, want %q", v, got, want)
		}
	}
	for p := int64(1); p > 0 && p <= math.MaxInt64/10; p *= 10 {
		for _, v := range []int64{p - 1, p, p + 1, -p + 1, -p, -p - 1} {
			check(v)
		}
	}
	for i := 0; i < 20000; i++ {
		v := rng.Int63() >> uint(rng.Intn(63))
		if rng.Intn(2) == 0 {
			v = -v
		}
		check(v)
	}
}

func TestRefactorCommaAllocs(t *testing.T) {
	for _, v := range []int64{5, 999, 1000, 123456789, -987654321, math.MaxInt64, math.MinInt64} {
		v := v
		if n := testing.AllocsPerRun(200, func() { _ = humanize.Comma(v) }); n > 1 {
			t.Errorf("Comma(%d) allocates %v times per call, want at most 1", v, n)
		}
	}
}

func TestRefactorOthersUnchanged(t *testing.T) {
	if got := humanize.Commaf(-1234567.25); got != "-1,234,567.25" {
		t.Errorf("Commaf = %q", got)
	}
	if got := humanize.BigComma(big.NewInt(-1234567890)); got != "-1,234,567,890" {
		t.Errorf("BigComma = %q", got)
	}
	if got := humanize.CommafWithDigits(1234.5678, 2); got != "1,234.56" {
		t.Errorf("CommafWithDigits = %q", got)
	}
}
