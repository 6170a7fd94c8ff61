package pflag_test

import (
	"io/ioutil"
	"net"
	"reflect"
	"testing"

	"github.com/spf13/pflag"
)

func newSet() *pflag.FlagSet {
	fs := pflag.NewFlagSet("hidden", pflag.ContinueOnError)
	fs.SetOutput(ioutil.Discard)
	return fs
}

func TestFixUintSliceParse(t *testing.T) {
	cases := []struct {
		arg  string
		want []uint
	}{
		{"--ids=1,2,3", []uint{1, 2, 3}},
		{"--ids=0x10,0X1f,0o17,0b101,010,7", []uint{16, 31, 15, 5, 8, 7}},
		{"--ids=0xffffffff", []uint{4294967295}},
		{"--ids=1_000", []uint{1000}},
	}
	for _, c := range cases {
		fs := newSet()
		ids := fs.UintSlice("ids", nil, "ids")
		if err := fs.Parse([]string{c.arg}); err != nil {
			t.Errorf("Parse(%q): %v", c.arg, err)
			continue
		}
		if !reflect.DeepEqual(*ids, c.want) {
			t.Errorf("Parse(%q) = %v, want %v", c.arg, *ids, c.want)
		}
		got, err := fs.GetUintSlice("ids")
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("GetUintSlice after %q = %v, %v; want %v", c.arg, got, err, c.want)
		}
	}
	for _, bad := range []string{"--ids=0x", "--ids=-1", "--ids=1,,2", "--ids=0xg", "--ids=ten"} {
		fs := newSet()
		fs.UintSlice("ids", nil, "ids")
		if err := fs.Parse([]string{bad}); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", bad)
		}
	}
}

func TestFixUintSliceRepeat(t *testing.T) {
	fs := newSet()
	ids := fs.UintSlice("ids", []uint{9}, "ids")
	if err := fs.Parse([]string{"--ids=0x1", "--ids", "0b10,3"}); err != nil {
		t.Fatal(err)
	}
	if want := []uint{1, 2, 3}; !reflect.DeepEqual(*ids, want) {
		t.Errorf("repeated --ids gave %v, want %v", *ids, want)
	}
}

func TestFixUintSliceValue(t *testing.T) {
	fs := newSet()
	fs.UintSlice("ids", nil, "ids")
	sv, ok := fs.Lookup("ids").Value.(pflag.SliceValue)
	if !ok {
		t.Fatal("a uintSlice flag must implement SliceValue")
	}
	if err := sv.Replace([]string{"0x20", "0o10"}); err != nil {
		t.Fatalf("Replace: %v", err)
	}
	if err := sv.Append("0b11"); err != nil {
		t.Fatalf("Append: %v", err)
	}
	if got, want := sv.GetSlice(), []string{"32", "8", "3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("GetSlice() = %v, want %v", got, want)
	}
	if err := sv.Append("0x"); err == nil {
		t.Error("Append(\"0x\") succeeded, want an error")
	}
	if err := sv.Replace([]string{"1", "-2"}); err == nil {
		t.Error("Replace with -2 succeeded, want an error")
	}
}

func TestFixGetIPNilDefault(t *testing.T) {
	fs := newSet()
	fs.IP("bind", nil, "address to bind")
	ip, err := fs.GetIP("bind")
	if err != nil {
		t.Fatalf("GetIP on an unset flag with a nil default: %v", err)
	}
	if ip != nil {
		t.Fatalf("GetIP = %#v, want nil", ip)
	}
	if err := fs.Parse([]string{"--bind=10.0.0.7"}); err != nil {
		t.Fatal(err)
	}
	ip, err = fs.GetIP("bind")
	if err != nil || !ip.Equal(net.ParseIP("10.0.0.7")) {
		t.Fatalf("GetIP after --bind=10.0.0.7 = %v, %v", ip, err)
	}
}

func TestFixGetIPErrors(t *testing.T) {
	fs := newSet()
	fs.IP("bind", net.ParseIP("127.0.0.1"), "address to bind")
	fs.String("name", "", "a string flag")
	if ip, err := fs.GetIP("bind"); err != nil || !ip.Equal(net.ParseIP("127.0.0.1")) {
		t.Errorf("GetIP with a default = %v, %v", ip, err)
	}
	if _, err := fs.GetIP("missing"); err == nil {
		t.Error("GetIP of an undefined flag succeeded, want an error")
	}
	if _, err := fs.GetIP("name"); err == nil {
		t.Error("GetIP of a string flag succeeded, want an error")
	}
}
