package wordfreq_test

import (
	"reflect"
	"testing"

	"example.com/wordfreq/wordfreq"
)

func checkCounts(t *testing.T, text string, want map[string]int) {
	t.Helper()
	got := wordfreq.Count(text)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Count(%q) = %v, want %v", text, got, want)
	}
}

func TestCountFoldsCase(t *testing.T) {
	checkCounts(t, "The the THE tHe", map[string]int{"the": 4})
}

func TestCountStripsPunctuation(t *testing.T) {
	checkCounts(t, "Hello, world! Hello... (world) \"hello\"?",
		map[string]int{"hello": 3, "world": 2})
}

func TestCountSeparators(t *testing.T) {
	checkCounts(t, "state-of-the-art\tco-op\nx/y_z",
		map[string]int{"state": 1, "of": 1, "the": 1, "art": 1, "co": 1, "op": 1, "x": 1, "y": 1, "z": 1})
}

func TestCountDigits(t *testing.T) {
	checkCounts(t, "route 66, Route 66; 7up", map[string]int{"route": 2, "66": 2, "7up": 1})
}

func TestCountUnicode(t *testing.T) {
	checkCounts(t, "Ärger ärger — ÉTÉ été; 東京 東京",
		map[string]int{"ärger": 2, "été": 2, "東京": 2})
}

func TestCountApostrophes(t *testing.T) {
	checkCounts(t, "Don't don\u2019t 'quoted' rock'n'roll dogs' o'",
		map[string]int{"don't": 2, "quoted": 1, "rock'n'roll": 1, "dogs": 1, "o": 1})
}

func TestTopOrdersByCount(t *testing.T) {
	counts := map[string]int{"a": 1, "b": 5, "c": 3, "d": 4, "e": 2}
	got := wordfreq.Top(counts, 3)
	want := []wordfreq.WordCount{{"b", 5}, {"d", 4}, {"c", 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Top(_, 3) = %v, want %v", got, want)
	}
}

func TestTopBreaksTiesByWord(t *testing.T) {
	counts := map[string]int{"pear": 2, "apple": 2, "fig": 3, "kiwi": 2, "date": 1, "banana": 2}
	got := wordfreq.Top(counts, 4)
	want := []wordfreq.WordCount{{"fig", 3}, {"apple", 2}, {"banana", 2}, {"kiwi", 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Top(_, 4) = %v, want %v", got, want)
	}
}

func TestTopManyTies(t *testing.T) {
	counts := map[string]int{}
	words := []string{"zeta", "eta", "alpha", "mu", "beta", "omega", "pi", "chi", "nu", "xi", "rho", "tau", "phi", "psi"}
	for _, w := range words {
		counts[w] = 7
	}
	counts["gamma"] = 9
	got := wordfreq.Top(counts, 6)
	want := []wordfreq.WordCount{{"gamma", 9}, {"alpha", 7}, {"beta", 7}, {"chi", 7}, {"eta", 7}, {"mu", 7}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Top(_, 6) = %v, want %v", got, want)
	}
}

func TestMergeAdds(t *testing.T) {
	dst := map[string]int{"a": 1, "b": 2}
	wordfreq.Merge(dst, map[string]int{"b": 3, "c": 4})
	want := map[string]int{"a": 1, "b": 5, "c": 4}
	if !reflect.DeepEqual(dst, want) {
		t.Errorf("after Merge dst = %v, want %v", dst, want)
	}
}

func TestMergeLeavesSource(t *testing.T) {
	dst := map[string]int{"x": 1}
	src := map[string]int{"x": 2, "y": 1}
	wordfreq.Merge(dst, src)
	if !reflect.DeepEqual(src, map[string]int{"x": 2, "y": 1}) {
		t.Errorf("Merge modified src: %v", src)
	}
	if dst["x"] != 3 {
		t.Errorf("dst[x] = %d, want 3", dst["x"])
	}
}

func TestMergeTwoTexts(t *testing.T) {
	total := map[string]int{}
	wordfreq.Merge(total, map[string]int{"go": 2, "is": 1})
	wordfreq.Merge(total, map[string]int{"go": 1, "fun": 1})
	want := map[string]int{"go": 3, "is": 1, "fun": 1}
	if !reflect.DeepEqual(total, want) {
		t.Errorf("merged = %v, want %v", total, want)
	}
}

func TestEdgeEmptyText(t *testing.T) {
	for _, text := range []string{"", "   \n\t", "... -- !?", "'''"} {
		got := wordfreq.Count(text)
		if got == nil || len(got) != 0 {
			t.Errorf("Count(%q) = %#v, want an empty non-nil map", text, got)
		}
	}
}

func TestEdgeTopMoreThanAvailable(t *testing.T) {
	got := wordfreq.Top(map[string]int{"a": 2, "b": 1}, 10)
	want := []wordfreq.WordCount{{"a", 2}, {"b", 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Top(_, 10) = %v, want %v", got, want)
	}
}

func TestEdgeTopNonPositive(t *testing.T) {
	for _, n := range []int{0, -1} {
		if got := wordfreq.Top(map[string]int{"a": 1}, n); len(got) != 0 {
			t.Errorf("Top(_, %d) = %v, want empty", n, got)
		}
	}
	if got := wordfreq.Top(nil, 3); len(got) != 0 {
		t.Errorf("Top(nil, 3) = %v, want empty", got)
	}
}

func TestEdgeTopLeavesCounts(t *testing.T) {
	counts := map[string]int{"a": 1, "b": 2}
	wordfreq.Top(counts, 1)
	if !reflect.DeepEqual(counts, map[string]int{"a": 1, "b": 2}) {
		t.Errorf("Top modified its input: %v", counts)
	}
}

func TestEdgeMergeNilSource(t *testing.T) {
	dst := map[string]int{"a": 1}
	wordfreq.Merge(dst, nil)
	if !reflect.DeepEqual(dst, map[string]int{"a": 1}) {
		t.Errorf("Merge(dst, nil) changed dst: %v", dst)
	}
}
