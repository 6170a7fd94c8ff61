package english_test

import (
	"reflect"
	"testing"

	"github.com/dustin/go-humanize/english"
)

func TestEnglishWordRules(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"file", "files"}, {"hero", "heros"}, {"bus", "buses"}, {"box", "boxes"},
		{"quiz", "quizes"}, {"church", "churches"}, {"dish", "dishes"},
		{"city", "cities"}, {"fly", "flies"}, {"day", "days"}, {"key", "keys"},
		{"toy", "toys"}, {"guy", "guys"}, {"y", "ys"}, {"BOX", "BOXes"},
		{"CITY", "CITies"}, {"", ""}, {"month", "months"},
	} {
		if got := english.PluralWord(2, c.in, ""); got != c.want {
			t.Errorf("PluralWord(2, %q, \"\") = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEnglishWordIrregular(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"child", "children"}, {"foot", "feet"}, {"goose", "geese"}, {"man", "men"},
		{"mouse", "mice"}, {"person", "people"}, {"tooth", "teeth"},
		{"woman", "women"}, {"ox", "oxen"}, {"deer", "deer"}, {"fish", "fish"},
		{"series", "series"}, {"sheep", "sheep"}, {"species", "species"},
		{"Child", "Childs"}, {"Man", "Mans"}, {"Fish", "Fishes"}, {"human", "humans"},
	} {
		if got := english.PluralWord(5, c.in, ""); got != c.want {
			t.Errorf("PluralWord(5, %q, \"\") = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestEnglishWordQuantity(t *testing.T) {
	for _, c := range []struct {
		n                      int
		singular, plural, want string
	}{
		{1, "object", "", "object"},
		{0, "object", "", "objects"},
		{-1, "object", "", "objects"},
		{2, "cactus", "cacti", "cacti"},
		{1, "cactus", "cacti", "cactus"},
		{7, "mouse", "mouses", "mouses"},
		{1, "", "many", ""},
	} {
		if got := english.PluralWord(c.n, c.singular, c.plural); got != c.want {
			t.Errorf("PluralWord(%d, %q, %q) = %q, want %q", c.n, c.singular, c.plural, got, c.want)
		}
	}
}

func TestEnglishPhrase(t *testing.T) {
	for _, c := range []struct {
		n                      int
		singular, plural, want string
	}{
		{1, "object", "", "1 object"},
		{0, "object", "", "0 objects"},
		{42, "box", "", "42 boxes"},
		{1234, "object", "", "1,234 objects"},
		{-1, "dog", "", "-1 dogs"},
		{-2500, "degree", "", "-2,500 degrees"},
		{1000000, "person", "", "1,000,000 people"},
		{3, "cactus", "cacti", "3 cacti"},
	} {
		if got := english.Plural(c.n, c.singular, c.plural); got != c.want {
			t.Errorf("Plural(%d, %q, %q) = %q, want %q", c.n, c.singular, c.plural, got, c.want)
		}
	}
}

func TestEnglishSeries(t *testing.T) {
	for _, c := range []struct {
		words []string
		conj  string
		want  string
	}{
		{nil, "and", ""},
		{[]string{}, "and", ""},
		{[]string{"foo"}, "and", "foo"},
		{[]string{"foo", "bar"}, "and", "foo and bar"},
		{[]string{"foo", "bar", "baz"}, "and", "foo, bar and baz"},
		{[]string{"a", "b", "c", "d"}, "or", "a, b, c or d"},
		{[]string{"a", ""}, "or", "a or "},
	} {
		in := append([]string(nil), c.words...)
		if got := english.WordSeries(in, c.conj); got != c.want {
			t.Errorf("WordSeries(%q, %q) = %q, want %q", c.words, c.conj, got, c.want)
		}
		if len(c.words) > 0 && !reflect.DeepEqual(in, c.words) {
			t.Errorf("WordSeries modified its input: %q", in)
		}
	}
}

func TestEnglishOxford(t *testing.T) {
	for _, c := range []struct {
		words []string
		conj  string
		want  string
	}{
		{nil, "and", ""},
		{[]string{"foo"}, "and", "foo"},
		{[]string{"foo", "bar"}, "and", "foo and bar"},
		{[]string{"foo", "bar", "baz"}, "and", "foo, bar, and baz"},
		{[]string{"a", "b", "c", "d"}, "or", "a, b, c, or d"},
	} {
		in := append([]string(nil), c.words...)
		if got := english.OxfordWordSeries(in, c.conj); got != c.want {
			t.Errorf("OxfordWordSeries(%q, %q) = %q, want %q", c.words, c.conj, got, c.want)
		}
		if len(c.words) > 0 && !reflect.DeepEqual(in, c.words) {
			t.Errorf("OxfordWordSeries modified its input: %q", in)
		}
	}
}
