// Package lint holds the house rules that go vet does not check, so that
// make test enforces them: today, that no function is longer than a limit,
// counting a cobra command's help text (its Long and Example literals) as
// no lines.
package lint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
)

// Func is a function declaration and its length in lines.
type Func struct {
	File  string // path of its file as found under the root
	Pos   string // file:line:column of its func keyword
	Name  string // Recv.Name for a method
	Lines int    // from func to closing brace, less cobra help text
}

func (f Func) String() string { return fmt.Sprintf("%s: %s is %d lines", f.Pos, f.Name, f.Lines) }

// LongFuncs returns the functions in the non-test Go files under root
// (skipping testdata and hidden directories) longer than max lines.
func LongFuncs(root string, max int) ([]Func, error) {
	var out []Func
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		fs, err := fileFuncs(p)
		if err != nil {
			return err
		}
		for _, f := range fs {
			if f.Lines > max {
				out = append(out, f)
			}
		}
		return nil
	})
	return out, err
}

// fileFuncs returns every function declared in the Go file at path.
func fileFuncs(path string) ([]Func, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("lint: %w", err)
	}
	line := func(p token.Pos) int { return fset.Position(p).Line }
	var out []Func
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		n := line(fn.End()) - line(fn.Pos()) + 1
		ast.Inspect(fn.Body, func(x ast.Node) bool {
			if kv, ok := x.(*ast.KeyValueExpr); ok && isHelp(kv) {
				n -= line(kv.Value.End()) - line(kv.Value.Pos()) + 1
			}
			return true
		})
		name := fn.Name.Name
		if fn.Recv != nil && len(fn.Recv.List) > 0 {
			name = recv(fn.Recv.List[0].Type) + "." + name
		}
		out = append(out, Func{File: path, Pos: fset.Position(fn.Pos()).String(), Name: name, Lines: n})
	}
	return out, nil
}

// isHelp reports whether kv is a cobra command's Long or Example field
// set to a string literal (or a sum of them).
func isHelp(kv *ast.KeyValueExpr) bool {
	k, ok := kv.Key.(*ast.Ident)
	if !ok || (k.Name != "Long" && k.Name != "Example") {
		return false
	}
	return isString(kv.Value)
}

func isString(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING
	case *ast.BinaryExpr:
		return e.Op == token.ADD && isString(e.X) && isString(e.Y)
	case *ast.ParenExpr:
		return isString(e.X)
	}
	return false
}

// recv names a method's receiver type without its pointer or type parameters.
func recv(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recv(e.X)
	case *ast.IndexExpr:
		return recv(e.X)
	case *ast.IndexListExpr:
		return recv(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}
