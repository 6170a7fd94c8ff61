// gotwin: the negative twin of a Go test file. Every literal a test compares its result
// against (`if got != LIT { t.Error... }`, a table's field that such a comparison reads,
// `assert.Equal(t, LIT, got)`) is changed, so code that computes the right answer fails
// the twin. Only comparisons a passing test surely reaches are changed: statements at
// the top of a Test function's body, of a range loop over a table there, or of a t.Run
// closure in that loop. Usage: gotwin IN OUT; prints {"tests": [names changed]}.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strconv"
	"strings"
)

func perturb(lit *ast.BasicLit) bool {
	switch lit.Kind {
	case token.INT:
		v, err := strconv.ParseInt(strings.ReplaceAll(lit.Value, "_", ""), 0, 64)
		if err != nil || v == 1<<63-1 {
			return false
		}
		lit.Value = strconv.FormatInt(v+1, 10)
	case token.FLOAT:
		v, err := strconv.ParseFloat(strings.ReplaceAll(lit.Value, "_", ""), 64)
		if err != nil {
			return false
		}
		lit.Value = strconv.FormatFloat(v*2+1, 'g', -1, 64)
	case token.STRING:
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return false
		}
		lit.Value = strconv.Quote(s + "~twin")
	case token.CHAR:
		r, _, _, err := strconv.UnquoteChar(strings.Trim(lit.Value, "'"), '\'')
		if err != nil {
			return false
		}
		lit.Value = strconv.QuoteRune(r + 1)
	default:
		return false
	}
	return true
}

// literal: the basic literal an expression is (a sign allowed), or nil.
func literal(e ast.Expr) *ast.BasicLit {
	switch x := e.(type) {
	case *ast.BasicLit:
		return x
	case *ast.ParenExpr:
		return literal(x.X)
	case *ast.UnaryExpr:
		if x.Op == token.SUB || x.Op == token.ADD {
			return literal(x.X)
		}
	}
	return nil
}

var failing = map[string]bool{"Error": true, "Errorf": true, "Fatal": true, "Fatalf": true, "Fail": true, "FailNow": true}

// fails: whether a block calls X.Error/Errorf/Fatal/Fatalf/Fail/FailNow.
func fails(b *ast.BlockStmt) bool {
	found := false
	ast.Inspect(b, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if s, ok := c.Fun.(*ast.SelectorExpr); ok && failing[s.Sel.Name] {
				found = true
			}
		}
		return !found
	})
	return found
}

type twin struct {
	changed int
	decls   map[string]*ast.CompositeLit          // table variables of the Test
	fields  map[*ast.CompositeLit]map[string]bool // table -> fields compared
}

// conds: the != comparisons of an if condition joined by ||.
func conds(e ast.Expr) []*ast.BinaryExpr {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return conds(x.X)
	case *ast.BinaryExpr:
		if x.Op == token.LOR {
			return append(conds(x.X), conds(x.Y)...)
		}
		if x.Op == token.NEQ {
			return []*ast.BinaryExpr{x}
		}
	}
	return nil
}

// statements: a block's statements the test surely reaches, with the loop variable of
// the range over a table they sit in ("" at the top).
func (tw *twin) statements(list []ast.Stmt, loopVar string, table *ast.CompositeLit) {
	for _, st := range list {
		switch s := st.(type) {
		case *ast.IfStmt:
			if s.Else != nil || !fails(s.Body) {
				continue
			}
			for _, cmp := range conds(s.Cond) {
				for _, side := range []ast.Expr{cmp.X, cmp.Y} {
					if lit := literal(side); lit != nil && perturb(lit) {
						tw.changed++
					} else if sel, ok := side.(*ast.SelectorExpr); ok && loopVar != "" {
						if id, ok := sel.X.(*ast.Ident); ok && id.Name == loopVar && table != nil {
							if tw.fields[table] == nil {
								tw.fields[table] = map[string]bool{}
							}
							tw.fields[table][sel.Sel.Name] = true
						}
					}
				}
			}
		case *ast.ExprStmt:
			call, ok := s.X.(*ast.CallExpr)
			if !ok {
				continue
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				pkg, _ := sel.X.(*ast.Ident)
				equal := sel.Sel.Name == "Equal" || sel.Sel.Name == "Equalf" || sel.Sel.Name == "EqualValues"
				if pkg != nil && (pkg.Name == "assert" || pkg.Name == "require") && equal && len(call.Args) >= 3 {
					if lit := literal(call.Args[1]); lit != nil && perturb(lit) {
						tw.changed++
					}
				}
				// t.Run(name, func(t *testing.T) { ... }) inside a table loop
				if sel.Sel.Name == "Run" && len(call.Args) == 2 {
					if fn, ok := call.Args[1].(*ast.FuncLit); ok {
						tw.statements(fn.Body.List, loopVar, table)
					}
				}
			}
		case *ast.RangeStmt:
			if loopVar != "" {
				continue
			}
			v, ok := s.Value.(*ast.Ident)
			var tab *ast.CompositeLit
			switch x := s.X.(type) {
			case *ast.Ident:
				tab = tw.decls[x.Name]
			case *ast.CompositeLit:
				tab = x
			}
			if ok && tab != nil {
				tw.statements(s.Body.List, v.Name, tab)
			}
		}
	}
}

// declare: the table literals a Test assigns to a variable (tests := []struct{...}{...}).
func (tw *twin) declare(body *ast.BlockStmt) {
	for _, st := range body.List {
		switch s := st.(type) {
		case *ast.AssignStmt:
			if len(s.Lhs) == 1 && len(s.Rhs) == 1 {
				id, ok := s.Lhs[0].(*ast.Ident)
				comp, ok2 := s.Rhs[0].(*ast.CompositeLit)
				if ok && ok2 {
					tw.decls[id.Name] = comp
				}
			}
		case *ast.DeclStmt:
			if g, ok := s.Decl.(*ast.GenDecl); ok {
				for _, spec := range g.Specs {
					if vs, ok := spec.(*ast.ValueSpec); ok && len(vs.Names) == 1 && len(vs.Values) == 1 {
						if comp, ok := vs.Values[0].(*ast.CompositeLit); ok {
							tw.decls[vs.Names[0].Name] = comp
						}
					}
				}
			}
		}
	}
}

// tables: change the compared fields of every row of the tables the loops read.
func (tw *twin) tables() {
	for comp, fields := range tw.fields {
		var names []string // positional fields of an inline struct type
		if arr, ok := comp.Type.(*ast.ArrayType); ok {
			if st, ok := arr.Elt.(*ast.StructType); ok {
				for _, f := range st.Fields.List {
					for _, n := range f.Names {
						names = append(names, n.Name)
					}
				}
			}
		}
		for _, elt := range comp.Elts {
			row, ok := elt.(*ast.CompositeLit)
			if !ok {
				continue
			}
			for i, field := range row.Elts {
				name, value := "", field
				if kv, ok := field.(*ast.KeyValueExpr); ok {
					if k, ok := kv.Key.(*ast.Ident); ok {
						name, value = k.Name, kv.Value
					}
				} else if i < len(names) {
					name = names[i]
				}
				if fields[name] {
					if lit := literal(value); lit != nil && perturb(lit) {
						tw.changed++
					}
				}
			}
		}
	}
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gotwin IN OUT")
		os.Exit(2)
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, os.Args[1], nil, parser.ParseComments)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var tests []string
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
			continue
		}
		tw := &twin{decls: map[string]*ast.CompositeLit{}, fields: map[*ast.CompositeLit]map[string]bool{}}
		tw.declare(fn.Body)
		tw.statements(fn.Body.List, "", nil)
		tw.tables()
		if tw.changed > 0 {
			tests = append(tests, fn.Name.Name)
		}
	}
	var out bytes.Buffer
	if err := format.Node(&out, fset, file); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], out.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sort.Strings(tests)
	data, _ := json.Marshal(map[string][]string{"tests": tests})
	fmt.Println(string(data))
}
