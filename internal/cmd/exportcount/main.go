// Command exportcount counts the exported identifiers a package declares in its non-test files: top-level
// types, functions, variables and constants, and with -methods exported methods too. It measures how much
// of a package other packages can reach (issue 25: `server` went from 78 such names, methods included, to 15).
//
//	go run ./internal/cmd/exportcount -methods server server/core server/mcp
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	methods := flag.Bool("methods", false, "count exported methods too")
	flag.Parse()
	for _, dir := range flag.Args() {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		n := 0
		fs := token.NewFileSet()
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fs, f, nil, 0)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			for _, d := range af.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Name.IsExported() && (d.Recv == nil || *methods) {
						n++
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() {
								n++
							}
						case *ast.ValueSpec:
							for _, nm := range s.Names {
								if nm.IsExported() {
									n++
								}
							}
						}
					}
				}
			}
		}
		fmt.Printf("%s\t%d\n", dir, n)
	}
}
