package shellwords_test

import (
	"reflect"
	"testing"

	"github.com/mattn/go-shellwords"
)

type envCase struct {
	line string
	envs []string
	args []string
}

func checkEnvs(t *testing.T, cases []envCase) {
	t.Helper()
	for _, c := range cases {
		envs, args, err := shellwords.ParseWithEnvs(c.line)
		if err != nil {
			t.Errorf("ParseWithEnvs(%q) error: %v", c.line, err)
			continue
		}
		if envs == nil || args == nil {
			t.Errorf("ParseWithEnvs(%q) = %#v, %#v: want non-nil slices", c.line, envs, args)
		}
		if len(envs) != len(c.envs) || (len(envs) > 0 && !reflect.DeepEqual(envs, c.envs)) {
			t.Errorf("ParseWithEnvs(%q) envs = %q, want %q", c.line, envs, c.envs)
		}
		if len(args) != len(c.args) || (len(args) > 0 && !reflect.DeepEqual(args, c.args)) {
			t.Errorf("ParseWithEnvs(%q) args = %q, want %q", c.line, args, c.args)
		}
	}
}

func TestEnvsBasic(t *testing.T) {
	checkEnvs(t, []envCase{
		{"FOO=foo cmd --bar=baz", []string{"FOO=foo"}, []string{"cmd", "--bar=baz"}},
		{"A=1 B=2 run", []string{"A=1", "B=2"}, []string{"run"}},
		{"cmd arg", []string{}, []string{"cmd", "arg"}},
		{"", []string{}, []string{}},
		{"   ", []string{}, []string{}},
		{"ONLY=env", []string{"ONLY=env"}, []string{}},
		{"X= cmd", []string{"X="}, []string{"cmd"}},
		{"_private=1 __x9=2 cmd", []string{"_private=1", "__x9=2"}, []string{"cmd"}},
		{"URL=a=b=c cmd", []string{"URL=a=b=c"}, []string{"cmd"}},
	})
}

func TestEnvsQuoting(t *testing.T) {
	checkEnvs(t, []envCase{
		{`FOO="a b" cmd`, []string{"FOO=a b"}, []string{"cmd"}},
		{`FOO='x  y' BAR=z cmd 'q r'`, []string{"FOO=x  y", "BAR=z"}, []string{"cmd", "q r"}},
		{`MSG=hello\ world echo`, []string{"MSG=hello world"}, []string{"echo"}},
		{`EMPTY="" cmd ""`, []string{"EMPTY="}, []string{"cmd", ""}},
	})
}

func TestEnvsNames(t *testing.T) {
	checkEnvs(t, []envCase{
		{"=x cmd", []string{}, []string{"=x", "cmd"}},
		{"1A=b cmd", []string{}, []string{"1A=b", "cmd"}},
		{"A-B=1 cmd", []string{}, []string{"A-B=1", "cmd"}},
		{"A.B=1 cmd", []string{}, []string{"A.B=1", "cmd"}},
		{"Z9=1 Ä=2 cmd", []string{"Z9=1"}, []string{"Ä=2", "cmd"}},
	})
}

func TestEnvsAfterCommand(t *testing.T) {
	checkEnvs(t, []envCase{
		{"cmd FOO=bar", []string{}, []string{"cmd", "FOO=bar"}},
		{"A=1 cmd B=2", []string{"A=1"}, []string{"cmd", "B=2"}},
		{"A=1 --opt=2 B=3", []string{"A=1"}, []string{"--opt=2", "B=3"}},
		{"A=1 B=2 env C=3 D=4 prog", []string{"A=1", "B=2"}, []string{"env", "C=3", "D=4", "prog"}},
	})
}

func TestEnvsParserMethod(t *testing.T) {
	p := shellwords.NewParser()
	p.ParseEnv = true
	p.Getenv = func(name string) string {
		if name == "HOME" {
			return "/home/gopher"
		}
		return ""
	}
	envs, args, err := p.ParseWithEnvs("GOPATH=$HOME/go go build $HOME/src")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"GOPATH=/home/gopher/go"}; !reflect.DeepEqual(envs, want) {
		t.Errorf("envs = %q, want %q", envs, want)
	}
	if want := []string{"go", "build", "/home/gopher/src"}; !reflect.DeepEqual(args, want) {
		t.Errorf("args = %q, want %q", args, want)
	}

	line := "A=1 make all; echo done"
	want := shellwords.NewParser()
	if _, err := want.Parse(line); err != nil {
		t.Fatal(err)
	}
	q := shellwords.NewParser()
	envs, args, err = q.ParseWithEnvs(line)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(envs, []string{"A=1"}) || !reflect.DeepEqual(args, []string{"make", "all"}) {
		t.Errorf("ParseWithEnvs(%q) = %q, %q", line, envs, args)
	}
	if q.Position != want.Position {
		t.Errorf("Position = %d after ParseWithEnvs, Parse gives %d", q.Position, want.Position)
	}
}

func TestEnvsErrors(t *testing.T) {
	for _, line := range []string{`FOO="unterminated cmd`, `A=1 'open`, `cmd \`} {
		envs, args, err := shellwords.ParseWithEnvs(line)
		if err == nil {
			t.Errorf("ParseWithEnvs(%q) succeeded, want an error", line)
		}
		if envs != nil || args != nil {
			t.Errorf("ParseWithEnvs(%q) = %q, %q with an error; want nil slices", line, envs, args)
		}
	}
}
